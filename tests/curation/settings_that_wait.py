"""Settings that say Django is loading them (a marker file), then keep loading: a test interrupts a
command there, before any of the command's own code runs."""

import os
import time
from pathlib import Path

from config.settings import *  # noqa: F403

Path(os.environ["ATLAS_TEST_LOADING_MARKER"]).touch()
time.sleep(600)  # a load that lasts until the test's Ctrl-C
