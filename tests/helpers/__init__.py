"""Helpers that several test modules share, in modules named by what they hold. Test modules import
from here (or from a conftest), never from another test module."""
