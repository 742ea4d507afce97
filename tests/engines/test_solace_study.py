"""The Solace study command, on a few deals."""

from __future__ import annotations

import pytest

from games.solace.study import main, play_deal, run_study


def test_study_counts_and_prints(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--deals", "20", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "Solace study: 20 deals" in out
    assert "highest score any deal allows: 8" in out
    assert "perfect-information mean:" in out
    assert "bot mean (visible pieces only):" in out
    assert "bot reached its deal's maximum:" in out
    assert "best expected mean without seeing inside black pieces:" in out
    rows = [line.split() for line in out.splitlines() if line[:5].strip().isdigit()]
    assert [int(r[0]) for r in rows] == list(range(11))  # scores 0..10
    assert sum(int(r[1]) for r in rows) == sum(int(r[3]) for r in rows) == 20


def test_study_outcomes_are_reproducible_and_bounded() -> None:
    study = run_study(deals=3, seed=10)
    assert [o.seed for o in study.outcomes] == [10, 11, 12]
    assert study.outcomes == run_study(deals=3, seed=10).outcomes
    assert study.outcomes[1] == play_deal(11)
    for outcome in study.outcomes:
        assert 0 <= outcome.bot <= outcome.best <= 8
        assert 0 <= outcome.expected <= outcome.best
    assert study.bot_mean <= study.best_mean == 8
    assert run_study(deals=2, seed=10, jobs=2).outcomes == study.outcomes[:2]


def test_study_refuses_bad_arguments() -> None:
    with pytest.raises(SystemExit):
        main(["--deals", "0"])
