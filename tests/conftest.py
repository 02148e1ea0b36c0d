"""Suite-wide test settings.

Under CI (``CI`` set) hypothesis runs derandomized: the same examples every run, so a red build
is reproducible; a developer's local runs keep exploring new examples.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
