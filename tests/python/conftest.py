"""pytest configuration: make the test tree importable and fix seeds."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(autouse=True)
def _seed():
    import numpy as np
    np.random.seed(0)
    yield
