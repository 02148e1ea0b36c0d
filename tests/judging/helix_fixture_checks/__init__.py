"""User code checks that the judging tests reference by dotted path (``helix_fixture_checks.orders:...``)."""
