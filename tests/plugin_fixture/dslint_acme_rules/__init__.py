"""ACME's house rules for dslint (a test fixture)."""
