import { test } from "node:test";
import assert from "node:assert/strict";
import { create } from "@bufbuild/protobuf";
import { NotificationKind, NotificationSchema } from "../src/gen/tabletop/lobby/v1/lobby_pb";
import { describe as describeIn, idBefore, isAfter, resumeAfter } from "../src/notify-text";

const TITLES: Record<string, string> = { esoloe: "e-SOLO-e", zoxso: "ZoxSo", solo: "Solo", solace: "Solace" };
const describe = (n: Parameters<typeof describeIn>[0]) => describeIn(n, (game) => TITLES[game] ?? game);

const note = (kind: NotificationKind, fields: Record<string, string> = {}) =>
  create(NotificationSchema, { notificationId: "1-0", kind, ...fields });

test("each notification kind in words, with the game's title", () => {
  assert.equal(describe(note(NotificationKind.CHALLENGE_RECEIVED, { name: "ann", game: "esoloe" })), "ann challenges you to an e-SOLO-e game.");
  assert.equal(describe(note(NotificationKind.CHALLENGE_ACCEPTED, { name: "bob", game: "zoxso" })), "bob accepted your ZoxSo challenge.");
  assert.equal(describe(note(NotificationKind.CHALLENGE_DECLINED, { name: "bob", game: "solo" })), "bob declined your Solo challenge.");
  assert.equal(describe(note(NotificationKind.CHALLENGE_EXPIRED, { name: "bob", game: "solo" })), "The Solo challenge with bob expired unanswered.");
  assert.equal(describe(note(NotificationKind.REMATCH_OFFERED, { name: "cy", game: "zoxso" })), "cy offers you a rematch of ZoxSo.");
  assert.equal(describe(note(NotificationKind.GAME_STARTED, { name: "di", game: "solo", gameId: "solo-1" })), "di is playing a Solo game.");
  assert.equal(describe(note(NotificationKind.YOUR_TURN, { gameId: "zoxso-abc" })), "Your turn in a ZoxSo game.");
  assert.equal(describe(note(NotificationKind.UNSPECIFIED, { message: "something new" })), "something new");
});

test("a stream resumes after the last id, or from before the first stream opened", () => {
  assert.equal(resumeAfter("", ""), "");
  assert.equal(resumeAfter("", "1700000000000-0"), "1700000000000-0");
  assert.equal(resumeAfter("1700000000500-3", "1700000000000-0"), "1700000000500-3");
  assert.equal(idBefore("Sun, 06 Dec 2026 21:00:00 GMT", 5), `${Date.parse("Sun, 06 Dec 2026 21:00:00 GMT") - 2000}-0`);
  assert.equal(idBefore(null, 10_000), "8000-0");
  assert.equal(idBefore("nonsense", 1000), "0-0");
});

test("a notification already had is known by its id", () => {
  assert.ok(isAfter("1700000000000-1", "1700000000000-0"));
  assert.ok(isAfter("1700000000001-0", "1700000000000-9"));
  assert.ok(isAfter("10-0", "9-5"));
  assert.ok(!isAfter("1700000000000-0", "1700000000000-0"));
  assert.ok(!isAfter("9-9", "10-0"));
  assert.ok(isAfter("1-0", ""));
});
