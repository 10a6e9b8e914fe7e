"""Every wheel is bounded by what it unpacks to, measured by unpacking it (registry/_unpacked.py): the attacks of
an outside review of core 0.7.14, each beside a valid twin."""

from __future__ import annotations

import struct
import zipfile
import zlib

import pytest
from agentos.registry import PublishError, _limits, publish
from registry.hostile import raw_wheel, wheel_members


def _patch_central(path, member: str, local: bool = False, **fields) -> None:
    """Rewrite ``member``'s central-directory ``method``, ``crc``, ``compress_size`` or ``file_size`` in place
    (and its local header's with ``local``)."""
    data = bytearray(path.read_bytes())
    end = data.rfind(b"PK\x05\x06")
    size, offset = struct.unpack_from("<II", data, end + 12)
    at = offset
    while at < offset + size:
        name_length, extra_length, comment_length = struct.unpack_from("<HHH", data, at + 28)
        if bytes(data[at + 46 : at + 46 + name_length]).decode() == member:
            header = struct.unpack_from("<I", data, at + 42)[0]
            for field, place, kind in (("method", 10, "<H"), ("crc", 16, "<I"), ("compress_size", 20, "<I"),
                                       ("file_size", 24, "<I")):
                if field in fields:
                    struct.pack_into(kind, data, at + place, fields[field])
                    if local:
                        struct.pack_into(kind, data, header + place - 2, fields[field])
        at += 46 + name_length + extra_length + comment_length
    path.write_bytes(bytes(data))


def _wheel(folder, version: str, extra: dict[str, bytes], compress: bool = True):
    members = {**wheel_members("agentos-env-evil", version), **extra}
    return raw_wheel(folder / f"agentos_env_evil-{version}-py3-none-any.whl", members, compress=compress)


def test_weights_under_any_spelling_of_their_path_are_bounded(tmp_path, monkeypatch):
    """``pkg-V.data/purelib/pkg/weights.safetensors`` installs where ``pkg/weights.safetensors`` does: the per-file
    bound applies to every member of every wheel, whatever its name; ``pkg/./w`` and ``pkg//w`` (``pkg/w`` to
    some readers, a second copy beside it) are refused as names."""
    monkeypatch.setattr(_limits, "MAX_UNPACKED_FILE", 5000)
    twin = _wheel(tmp_path / "ok", "1.0", {"agentos_env_evil-1.0.data/purelib/agentos_env_evil/w.bin": b"w" * 5000})
    assert publish([str(twin)], str(tmp_path / "index"))[0]["status"] == "published"
    too_large, bad_name = "unpacks to more than 5,000 bytes, the per-file limit", "has an empty or '.' part"
    cases = [("agentos_env_evil-2.0.data/purelib/agentos_env_evil/weights.safetensors", too_large),
             ("agentos_env_evil/weights.safetensors", too_large),
             ("agentos_env_evil/./weights.safetensors", bad_name), ("agentos_env_evil//weights.safetensors", bad_name)]
    for number, (name, expected) in enumerate(cases):
        wheel = _wheel(tmp_path / str(number), f"2.{number}", {name: b"w" * 5001})
        with pytest.raises(PublishError) as caught:
            publish([str(wheel)], str(tmp_path / "index"))
        assert expected in str(caught.value) and "\n" not in str(caught.value)


def test_a_member_whose_compressed_size_runs_into_the_next_is_refused(tmp_path):
    """A bomb overstates its compressed size so that its ratio looks modest: its data then overlaps the next
    member's, which no honest zip does."""
    extra = {"agentos_env_evil/zeros.bin": bytes(1 << 20), "agentos_env_evil/pad.bin": bytes(range(256)) * 400}
    twin = _wheel(tmp_path / "ok", "1.0", extra)
    assert publish([str(twin)], str(tmp_path / "index"))[0]["status"] == "published"
    bomb = _wheel(tmp_path / "bomb", "1.1", extra)
    _patch_central(bomb, "agentos_env_evil/zeros.bin", local=True, compress_size=50_000)  # about 1 KiB really
    with pytest.raises(PublishError) as caught:
        publish([str(bomb)], str(tmp_path / "index"))
    message = str(caught.value)
    assert "'agentos_env_evil/zeros.bin' claims compressed bytes that run into the next member" in message
    assert "\n" not in message


def test_a_member_that_fails_its_crc_or_disagrees_with_its_local_header_is_refused_in_one_line(tmp_path):
    """A size that understates the data, with the CRC of the whole: pip would stop with a traceback later; a
    central directory that disagrees with the local header is read one way by pip, another by unzip."""
    extra = {"agentos_env_evil/data.bin": b"d" * 4096}
    twin = _wheel(tmp_path / "ok", "1.0", extra, compress=False)
    assert publish([str(twin)], str(tmp_path / "index"))[0]["status"] == "published"
    cases = [({"file_size": 100, "compress_size": 100}, False, "has a local header whose CRC or sizes differ"),
             ({"crc": 12345}, True, "does not match its declared size and CRC"),
             ({"crc": 12345}, False, "has a local header whose CRC or sizes differ")]
    for number, (fields, local, expected) in enumerate(cases):
        broken = _wheel(tmp_path / f"crc{number}", f"1.{number + 1}", extra, compress=False)
        _patch_central(broken, "agentos_env_evil/data.bin", local=local, **fields)
        with pytest.raises(PublishError) as caught:
            publish([str(broken)], str(tmp_path / "index"))
        message = str(caught.value)
        assert "member 'agentos_env_evil/data.bin' " + expected in message and "\n" not in message
    assert [p.name for p in (tmp_path / "index" / "files" / "agentos-env-evil").glob("*.whl")] == [twin.name]


def test_a_deflate_stream_that_runs_past_its_declared_size_is_refused(tmp_path):
    """Declared 4,096 bytes with their CRC, but the stream inflates on (unzip writes it all, then complains):
    the stream must end exactly where the member does, at its declared size."""
    honest = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = honest.compress(bytes(4096)) + honest.flush(zlib.Z_FULL_FLUSH)
    longer = head + honest.compress(bytes(1 << 20)) + honest.flush()
    twin = _wheel(tmp_path / "ok", "1.0", {"agentos_env_evil/a.bin": bytes(4096)})
    assert publish([str(twin)], str(tmp_path / "index"))[0]["status"] == "published"
    wheel = _wheel(tmp_path / "liar", "1.1", {"agentos_env_evil/a.bin": longer}, compress=False)  # stored raw
    _patch_central(wheel, "agentos_env_evil/a.bin", local=True, method=zipfile.ZIP_DEFLATED,
                   crc=zlib.crc32(bytes(4096)), file_size=4096)
    with zipfile.ZipFile(wheel) as zf:  # what pip reads: the 4,096 zeros, the CRC right
        assert zf.read("agentos_env_evil/a.bin") == bytes(4096)
    with pytest.raises(PublishError) as caught:
        publish([str(wheel)], str(tmp_path / "index"))
    assert "member 'agentos_env_evil/a.bin' unpacks to more than its declared 4,096 bytes" in str(caught.value)


def test_a_member_compressed_with_bzip2_or_lzma_is_refused(tmp_path):
    """zipfile inflates bzip2 and lzma in one unbounded step: 750 bytes of bzip2 held 1 GiB (2 GB of memory to
    publish, and to pip install). Wheels are stored or deflated."""
    twin = _wheel(tmp_path / "ok", "1.0", {"agentos_env_evil/zeros.bin": bytes(4096)})
    assert publish([str(twin)], str(tmp_path / "index"))[0]["status"] == "published"
    for number, method in enumerate([zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA]):
        wheel = _wheel(tmp_path / str(number), f"1.{number + 1}", {})
        with zipfile.ZipFile(wheel, "a") as zf:
            zf.writestr(zipfile.ZipInfo("agentos_env_evil/zeros.bin", (2020, 2, 2, 0, 0, 0)), bytes(4096),
                        compress_type=method)
        with pytest.raises(PublishError) as caught:
            publish([str(wheel)], str(tmp_path / "index"))
        assert f"zeros.bin is compressed with method {method} (a wheel's members are stored or deflated)" in str(
            caught.value)


def test_the_overlap_is_measured_from_the_end_of_the_local_header(tmp_path):
    """A compressed size that reaches exactly the next member's header still overlaps it: the data start after
    the 30 bytes, the name and the extra field of the member's own local header."""
    extra = {"agentos_env_evil/a.bin": b"a" * 1000, "agentos_env_evil/b.bin": b"b" * 1000}
    wheel = _wheel(tmp_path / "w", "1.0", extra, compress=False)
    with zipfile.ZipFile(wheel) as zf:
        a, b = zf.getinfo("agentos_env_evil/a.bin"), zf.getinfo("agentos_env_evil/b.bin")
    assert b.header_offset - a.header_offset == 30 + len(a.filename) + 1000  # stored, no extra field
    _patch_central(wheel, "agentos_env_evil/a.bin", local=True, compress_size=b.header_offset - a.header_offset)
    with pytest.raises(PublishError) as caught:
        publish([str(wheel)], str(tmp_path / "index"))
    assert "'agentos_env_evil/a.bin' claims compressed bytes that run into the next member" in str(caught.value)


def test_a_local_header_that_names_another_method_is_refused(tmp_path):
    """pip takes the method from the central directory (stored here), unzip from the local header (bzip2)."""
    wheel = _wheel(tmp_path / "w", "1.0", {"agentos_env_evil/a.bin": b"a" * 100}, compress=False)
    _patch_central(wheel, "agentos_env_evil/a.bin", local=True, method=zipfile.ZIP_BZIP2)
    _patch_central(wheel, "agentos_env_evil/a.bin", method=zipfile.ZIP_STORED)
    with zipfile.ZipFile(wheel) as zf:
        assert zf.read("agentos_env_evil/a.bin") == b"a" * 100
    with pytest.raises(PublishError) as caught:
        publish([str(wheel)], str(tmp_path / "index"))
    assert "a local header that names another file, method or flags than the central directory" in str(caught.value)


def _local_entry(name: str, data: bytes) -> bytes:
    """A stored local entry (header and data) that no central directory names."""
    crc = zlib.crc32(data)
    return struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0, crc, len(data), len(data), len(name), 0) + (
        name.encode() + data)


def test_entries_that_only_a_streaming_reader_would_see_are_refused(tmp_path):
    """An installer that reads the local headers front to back (not the central directory) would also install an
    entry hidden before the first member or between two: nothing may sit outside the members."""
    hidden = _local_entry("evil.pth", b"import os; os.system('echo PWNED')\n")
    twin = _wheel(tmp_path / "ok", "1.0", {"agentos_env_evil/a.bin": b"a" * 100}, compress=False)
    assert publish([str(twin)], str(tmp_path / "index"))[0]["status"] == "published"
    before = tmp_path / "before" / "agentos_env_evil-1.1-py3-none-any.whl"
    before.parent.mkdir()
    before.write_bytes(hidden + _wheel(tmp_path / "b0", "1.1", {}, compress=False).read_bytes())
    with zipfile.ZipFile(before) as zf:  # zipfile finds the members after the prefix
        assert "evil.pth" not in zf.namelist()
    with pytest.raises(PublishError) as caught:
        publish([str(before)], str(tmp_path / "index"))
    assert f"{len(hidden):,} bytes before its first member (hidden entries" in str(caught.value)
    between = _wheel(tmp_path / "between", "1.2", {"agentos_env_evil/a.bin": b"a" * 100}, compress=False)
    with zipfile.ZipFile(between) as zf:
        a = zf.getinfo("agentos_env_evil/a.bin")
    raw = between.read_bytes()
    stop = a.header_offset + 30 + len(a.filename) + 100
    data = bytearray(raw[:stop] + hidden + raw[stop:])  # the same members, the hidden entry after a.bin's data
    end = data.rfind(b"PK\x05\x06")
    size, offset = struct.unpack_from("<II", data, end + 12)
    at = offset + len(hidden)  # shift every later header offset, and the central directory's
    while at < offset + len(hidden) + size:
        name_length, extra_length, comment_length = struct.unpack_from("<HHH", data, at + 28)
        header = struct.unpack_from("<I", data, at + 42)[0]
        if header >= stop:
            struct.pack_into("<I", data, at + 42, header + len(hidden))
        at += 46 + name_length + extra_length + comment_length
    struct.pack_into("<I", data, end + 16, offset + len(hidden))
    between.write_bytes(bytes(data))
    with zipfile.ZipFile(between) as zf:
        assert zf.read("agentos_env_evil/a.bin") == b"a" * 100 and "evil.pth" not in zf.namelist()
    with pytest.raises(PublishError) as caught:
        publish([str(between)], str(tmp_path / "index"))
    assert f"'agentos_env_evil/a.bin' is followed by {len(hidden):,} bytes that belong to no member" in str(
        caught.value)


def test_names_that_appear_twice_are_refused(tmp_path):
    """zipfile reads the last of two entries of one name, a streaming installer may keep the first."""
    wheel = _wheel(tmp_path / "w", "1.0", {"agentos_env_evil/a.py": b"evil = 1\n"})
    with zipfile.ZipFile(wheel, "a") as zf:
        zf.writestr(zipfile.ZipInfo("agentos_env_evil/A.py", (2020, 2, 2, 0, 0, 0)), b"honest = 1\n")
    with pytest.raises(PublishError) as caught:
        publish([str(wheel)], str(tmp_path / "index"))
    assert "member 'agentos_env_evil/A.py' lands on another member's path (ignoring case" in str(caught.value)


def test_a_stored_member_with_a_data_descriptor_or_other_flags_locally_is_refused(tmp_path):
    """A stored member's end is only known from its size: with a descriptor flag a streaming reader would look
    for the descriptor's signature inside the data. Flags that change how a name or data read must agree."""
    for number, (flag, expected) in enumerate([(0x08, "is stored with a data descriptor"),
                                               (0x800, "names another file, method or flags")]):
        wheel = _wheel(tmp_path / str(number), f"1.{number}", {"agentos_env_evil/a.bin": b"a" * 100},
                       compress=False)
        raw = bytearray(wheel.read_bytes())
        with zipfile.ZipFile(wheel) as zf:
            header = zf.getinfo("agentos_env_evil/a.bin").header_offset
        struct.pack_into("<H", raw, header + 6, flag)  # the local header's flags
        if flag == 0x08:  # and the central directory's, so the headers agree
            at = raw.rfind(b"PK\x01\x02", 0, raw.rfind(b"agentos_env_evil/a.bin"))
            struct.pack_into("<H", raw, at + 8, flag)
        wheel.write_bytes(bytes(raw))
        with pytest.raises(PublishError) as caught:
            publish([str(wheel)], str(tmp_path / "index"))
        assert expected in str(caught.value)


def _rename(wheel, old: str, new: str) -> None:
    """Rename a member in both of its headers (the same length)."""
    assert len(old.encode()) == len(new.encode())
    wheel.write_bytes(wheel.read_bytes().replace(old.encode(), new.encode()))


#: a member appended to an honest wheel, and the refusal it gets
ADDED = {
    "metadata-case": ("agentos_env_evil-1.1.dist-info/Top_Level.txt", "agentos_env_evil\n",
                      "is a metadata file spelled in another case"),
    "file-and-folder": ("agentos_env_evil/aQb.py/inner.py", "x = 2\n", "is a file and a folder of other members"),
    "purelib": ("agentos_env_evil-1.1.data/purelib/agentos_env_evil/aQb.py", "import os\n",
                "lands on another member's path"),  # installed over the wheel's own agentos_env_evil/aQb.py
    "site-packages": ("agentos_env_evil-1.1.data/data/lib/python3.11/site-packages/agentos_env_evil/aQb.py",
                      "import os\n", "lands on another member's path"),
    "short-name": ("agentos_env_evil-1.1.dist-info/ENTRY_~1.TXT", "[agentos.environment]\nx = y:Z\n",
                   "as a short name"),
    "zero-width": ("agentos_env_evil/a\u200cQb.py", "import os\n", "has an invisible (format) character"),
    "device": ("agentos_env_evil/CON.py", "x = 1\n", "Windows reads as a device"),
}


@pytest.mark.parametrize("case", ["nul", "backslash", "trailing-dot", "symlink", "metadata-case", "file-and-folder",
                                  "purelib", "site-packages", "short-name", "zero-width", "device", "cp437", "folder",
                                  "unicode-path", "comment", "count", "between"])
def test_names_and_records_that_readers_take_differently_are_refused(tmp_path, case):
    """A NUL in a name (zipfile cuts it there), a backslash (a folder on Windows), non-ASCII bytes without the
    UTF-8 flag (cp437 to zipfile, UTF-8 to unzip), a folder that holds data, a second name in a Unicode path
    extra field (Python 3.12+ reads it, 3.11 does not), bytes after the End Of Central Directory record, a
    member count that is not the directory's."""
    twin = _wheel(tmp_path / "ok", "1.0", {"agentos_env_evil/a.py": b"x = 1\n"})
    assert publish([str(twin)], str(tmp_path / "index"))[0]["status"] == "published"
    wheel = _wheel(tmp_path / case, "1.1", {"agentos_env_evil/aQb.py": b"x = 1\n"})
    if case == "nul":
        _rename(wheel, "agentos_env_evil/aQb.py", "agentos_env_evil/a\x00b.py")
        expected = "with control characters"
    elif case == "backslash":
        _rename(wheel, "agentos_env_evil/aQb.py", "agentos_env_evil\\aQb.py")
        expected = "has a backslash or a colon in its name"
    elif case == "trailing-dot":
        _rename(wheel, "agentos_env_evil/aQb.py", "agentos_env_evil/ab.py.")
        expected = "a part ending in a dot or a space (dropped on Windows)"
    elif case == "symlink":
        info = zipfile.ZipInfo("agentos_env_evil/link.py", (2020, 2, 2, 0, 0, 0))
        info.create_system, info.external_attr = 3, 0o120777 << 16
        with zipfile.ZipFile(wheel, "a") as zf:
            zf.writestr(info, "/etc/passwd")
        expected = "is a symlink or a special file"
    elif case in ADDED:  # one more member, appended as it is
        member, data, expected = ADDED[case]
        with zipfile.ZipFile(wheel, "a") as zf:
            zf.writestr(member, data)
    elif case == "cp437":
        _rename(wheel, "agentos_env_evil/aQb.py", "agentos_env_evil/\xe9b.py")  # é: two bytes for "aQ"
        expected = "neither ASCII nor flagged UTF-8"
    elif case == "folder":
        _rename(wheel, "agentos_env_evil/aQb.py", "agentos_env_evil/aQb.p/")
        expected = "is a folder that holds data"
    elif case == "unicode-path":
        other = b"agentos_env_evil-1.1.dist-info/entry_points.txt"
        info = zipfile.ZipInfo("agentos_env_evil/notes.txt", (2020, 2, 2, 0, 0, 0))
        block = b"\x01" + struct.pack("<I", zlib.crc32(info.filename.encode())) + other
        info.extra = struct.pack("<HH", 0x7075, len(block)) + block
        with zipfile.ZipFile(wheel, "a") as zf:
            zf.writestr(info, b"[agentos.environment]\nsomeone_elses = agentos_env_evil:Thing\n")
        expected = "has a Unicode path extra field"
    elif case == "comment":
        with zipfile.ZipFile(wheel, "a") as zf:
            zf.comment = b"a comment"
        expected = "End Of Central Directory record is not its last 22 bytes"
    elif case == "count":
        raw = bytearray(wheel.read_bytes())
        struct.pack_into("<HH", raw, len(raw) - 22 + 8, 5, 5)  # six members
        wheel.write_bytes(bytes(raw))
        expected = "its End Of Central Directory record counts 5 members, not 6"
    else:  # a zip64 record and locator (whose offset readers follow differently) before the 32-bit record
        raw = wheel.read_bytes()
        _, _, _, _, count, size, offset, _ = struct.unpack("<IHHHHIIH", raw[-22:])
        record = struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count, count, size, offset)
        locator = struct.pack("<IIQI", 0x07064B50, 0, len(raw) - 22, 1)
        wheel.write_bytes(raw[:-22] + record + locator + raw[-22:])
        expected = "does not name the central directory right before it"
    with pytest.raises(PublishError) as caught:
        publish([str(wheel)], str(tmp_path / "index"))
    assert expected in str(caught.value) and "\n" not in str(caught.value)
