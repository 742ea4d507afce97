"""Settings read from the machine: how many CPUs a container may use."""

from __future__ import annotations

import os
from pathlib import Path

from runtime.config import cpu_limit

CPUS = len(os.sched_getaffinity(0))


def test_cpu_limit_follows_the_containers_quota_not_the_nodes_count(tmp_path: Path) -> None:
    (tmp_path / "cpu.max").write_text("150000 100000\n")  # cgroup v2: 1.5 CPUs
    assert cpu_limit(tmp_path) == min(CPUS, 2)
    (tmp_path / "cpu.max").write_text("20000 100000\n")  # a fifth of a CPU: still one process
    assert cpu_limit(tmp_path) == 1
    (tmp_path / "cpu.max").write_text("max 100000\n")  # no limit: the CPUs it may run on
    assert cpu_limit(tmp_path) == CPUS


def test_cpu_limit_reads_cgroup_v1_too(tmp_path: Path) -> None:
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("100000\n")
    (tmp_path / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert cpu_limit(tmp_path) == 1
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")  # no limit
    assert cpu_limit(tmp_path) == CPUS


def test_cpu_limit_without_cgroups_is_the_cpus_it_may_run_on(tmp_path: Path) -> None:
    assert cpu_limit(tmp_path / "missing") == CPUS
