"""The tests' shared helpers: plain functions, types and constants, imported by tests
and conftests alike. Conftests define fixtures only (built from these); no test imports
a conftest or another test module (tests/unit/test_test_house.py keeps it so)."""
