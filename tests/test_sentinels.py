"""What the platform makes of the Sentinels' answers (runtime/redis.py): the primary is the
newest configuration's, never the first answer's; a write is confirmed only by a majority of all
the Sentinels naming its node in that configuration with no doubt about it."""

from __future__ import annotations

from runtime.redis import SentinelAnswer, Survey

OLD, NEW = ("redis-0", 6379), ("redis-1", 6379)


def answer(primary: tuple[str, int], epoch: int, *flags: str) -> SentinelAnswer:
    return SentinelAnswer(primary, epoch, frozenset({"master", *flags}))


def test_the_primary_is_the_newest_configurations_whoever_answers_first() -> None:
    stale_first = Survey((answer(OLD, 3), answer(NEW, 4), answer(NEW, 4)), asked=3)
    assert stale_first.primary == NEW
    alone = Survey((answer(OLD, 3), answer(NEW, 4)), asked=3)  # one cut off, one behind
    assert alone.primary == NEW
    assert Survey((), asked=3).primary is None


def test_a_majority_of_all_sentinels_must_confirm_the_node() -> None:
    assert Survey((answer(OLD, 3), answer(OLD, 3), answer(OLD, 3)), asked=3).confirms(OLD)
    assert Survey((answer(OLD, 3), answer(OLD, 3)), asked=3).confirms(OLD)  # one silent
    assert not Survey((answer(OLD, 3),), asked=3).confirms(OLD), "one of three is no majority"
    assert not Survey((answer(OLD, 3), answer(OLD, 3)), asked=5).confirms(OLD)


def test_a_newer_configuration_or_a_doubt_refuses_the_confirmation() -> None:
    # The deposed primary: the far side promoted another in a newer epoch.
    assert not Survey((answer(OLD, 3), answer(NEW, 4), answer(NEW, 4)), asked=3).confirms(OLD)
    assert not Survey((answer(OLD, 3), answer(OLD, 3), answer(NEW, 4)), asked=3).confirms(OLD)
    # A failover begun (its leader says so), or a Sentinel that cannot see the primary.
    for doubt in ("failover_in_progress", "o_down", "s_down", "disconnected"):
        survey = Survey((answer(OLD, 3), answer(OLD, 3), answer(OLD, 3, doubt)), asked=3)
        assert not survey.confirms(OLD), doubt
    # A Sentinel that has not heard of the failover yet neither counts nor refuses.
    behind = Survey((answer(OLD, 3), answer(NEW, 4), answer(NEW, 4)), asked=3)
    assert behind.confirms(NEW)
    assert not Survey((answer(OLD, 3), answer(NEW, 4)), asked=3).confirms(NEW)
