"""What the platform makes of the Sentinels' answers (runtime/redis.py): the primary is the
newest configuration's, never the first answer's; a write is confirmed only by a majority of all
the Sentinels naming its node in that configuration, none of them with a failover of its own
under way or about to begin, nor a vote for a failover that may have made a newer
configuration."""

from __future__ import annotations

from runtime.redis import SentinelAnswer, Survey, Vote

OLD, NEW = ("redis-0", 6379), ("redis-1", 6379)


def answer(
    primary: tuple[str, int],
    epoch: int,
    *flags: str,
    runid: str = "",
    vote: Vote | None = None,
) -> SentinelAnswer:
    """A Sentinel's answer; by default it voted last in an epoch no newer than its own."""
    vote = Vote("?", 0) if vote is None else vote
    return SentinelAnswer(primary, epoch, frozenset({"master", *flags}), runid, vote)


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


def test_a_newer_configuration_or_a_failover_begun_refuses_the_confirmation() -> None:
    # The deposed primary: the far side promoted another in a newer epoch.
    assert not Survey((answer(OLD, 3), answer(NEW, 4), answer(NEW, 4)), asked=3).confirms(OLD)
    assert not Survey((answer(OLD, 3), answer(OLD, 3), answer(NEW, 4)), asked=3).confirms(OLD)
    # A Sentinel with a failover under way (its leader) or about to begin does not confirm.
    for doubt in ("failover_in_progress", "o_down"):
        survey = Survey((answer(OLD, 3), answer(OLD, 3, doubt)), asked=3)
        assert not survey.confirms(OLD), doubt
        # ...nor stop two others that have not voted for it: its election needs one of them.
        survey = Survey((answer(OLD, 3), answer(OLD, 3), answer(OLD, 3, doubt)), asked=3)
        assert survey.confirms(OLD), doubt
    # A Sentinel that has not heard of the failover yet neither counts nor refuses.
    behind = Survey((answer(OLD, 3), answer(NEW, 4), answer(NEW, 4)), asked=3)
    assert behind.confirms(NEW)
    assert not Survey((answer(OLD, 3), answer(NEW, 4)), asked=3).confirms(NEW)


def test_one_sentinel_that_cannot_see_the_primary_does_not_stop_the_others() -> None:
    """A Sentinel's subjective doubt is not a failover: that takes a majority's votes, which the
    confirmation sees. So two of three confirm though the third cannot see the primary."""
    for doubt in ("s_down", "disconnected"):
        survey = Survey((answer(OLD, 3), answer(OLD, 3), answer(OLD, 3, doubt)), asked=3)
        assert survey.confirms(OLD), doubt
    # ...but it is no majority when the others cannot confirm.
    assert not Survey((answer(OLD, 3), answer(OLD, 3, "s_down")), asked=5).confirms(OLD)


def test_a_vote_for_a_failover_that_no_answer_shows_ended_does_not_count() -> None:
    """The primary was cut off, the Sentinels beside the replicas voted in epoch 4 for the one
    beside the replica it promoted, and that pod was then cut off in turn while the primary
    came back: the promotion, in epoch 4, is known on that side only. The Sentinel that voted
    does not count, and the primary's own is no majority."""
    leader = "sentinel-q"
    primarys_own = answer(OLD, 3, runid="sentinel-p")
    voted = answer(OLD, 3, runid="sentinel-r", vote=Vote(leader, 4))
    assert not Survey((primarys_own, voted), asked=3).confirms(OLD)
    # A vote no newer than the configuration is an old failover's, adopted since.
    settled = answer(OLD, 4, runid="sentinel-r", vote=Vote(leader, 4))
    assert Survey((answer(OLD, 4), settled), asked=3).confirms(OLD)
    # A Sentinel whose vote was not told (it named another node when asked) does not count.
    unknown = SentinelAnswer(OLD, 3, frozenset({"master"}), "sentinel-r", None)
    assert not Survey((primarys_own, unknown), asked=3).confirms(OLD)


def test_a_vote_counts_again_once_its_leader_says_the_failover_ended_unmade() -> None:
    """The leader answers: no failover under way, its own vote cast in that epoch (so it did
    begin it), its configuration older (so it promoted no one). A leader that says nothing of
    that epoch yet, or is still at it, keeps the vote outstanding."""
    vote = Vote("sentinel-q", 4)
    voted = answer(OLD, 3, runid="sentinel-r", vote=vote)
    ended = answer(OLD, 3, runid="sentinel-q", vote=vote)
    assert Survey((answer(OLD, 3, runid="sentinel-p"), voted, ended), asked=3).confirms(OLD)
    not_begun = answer(OLD, 3, runid="sentinel-q", vote=Vote("sentinel-q", 2))
    assert not Survey((voted, not_begun), asked=3).confirms(OLD)
    assert Survey((voted, ended), asked=3).confirms(OLD)
    at_it = answer(OLD, 3, "failover_in_progress", runid="sentinel-q", vote=vote)
    assert not Survey((answer(OLD, 3), voted, at_it), asked=3).confirms(OLD)
    assert not Survey((voted, at_it), asked=3).confirms(OLD)
    # The leader, alone with its outstanding vote, is settled by its own answer as well.
    assert Survey((answer(OLD, 3), ended), asked=3).confirms(OLD)
