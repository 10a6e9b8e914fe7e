"""TD trainer."""
