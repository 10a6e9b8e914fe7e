"""Keep the chosen flavour's policy.py and drop what the agent does not use."""

import os
import shutil

flavour = "{{ cookiecutter.flavour }}"
os.replace(os.path.join("_flavours", f"{flavour}.py"), "policy.py")
shutil.rmtree("_flavours")
if "{{ cookiecutter.environment_source }}" != "gymnasium":
    os.remove("environment.py")
