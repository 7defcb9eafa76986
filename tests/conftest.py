"""Shared test settings: one torch thread (2-core CI machines) and the registry's ids."""

from __future__ import annotations

import pytest
import torch

import gymforge  # noqa: F401 - registers the ids

torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _quiet_torch_threads() -> None:
    torch.set_num_threads(1)
