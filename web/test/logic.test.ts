import { test } from "node:test";
import assert from "node:assert/strict";
import { narrow, pick } from "../src/moves";
import { formatClock, remaining } from "../src/clock";
import { esoloeSteps } from "../src/games/esoloe";
import { zoxsoSteps } from "../src/games/zoxso";

test("e-SOLO-e moves: the square, then the turn of the cube", () => {
  assert.deepEqual(esoloeSteps("c12"), ["c", "12"]);
  const legal = ["a12", "a13", "c12", "c35"];
  assert.deepEqual([...narrow(legal, esoloeSteps, []).next].sort(), ["a", "c"]);
  assert.deepEqual([...narrow(legal, esoloeSteps, ["c"]).next].sort(), ["12", "35"]);
  assert.deepEqual(pick(legal, esoloeSteps, [], "c"), { picked: ["c"] });
  assert.deepEqual(pick(legal, esoloeSteps, ["c"], "35"), { move: "c35", picked: [] });
  // a click on another square starts again from it
  assert.deepEqual(pick(legal, esoloeSteps, ["c"], "a"), { picked: ["a"] });
  assert.deepEqual(pick(legal, esoloeSteps, ["c"], "e"), { picked: [] });
});

test("a move that is also the start of a longer one waits for the next click", () => {
  const steps = (m: string) => m.split(/[-^]/);
  const legal = ["b2^B2", "b2^B2-B5", "b2-b3"];
  assert.deepEqual(pick(legal, steps, ["b2"], "B2"), { picked: ["b2", "B2"] });
  assert.equal(narrow(legal, steps, ["b2", "B2"]).complete, "b2^B2");
  assert.deepEqual(pick(legal, steps, ["b2", "B2"], "B5"), { move: "b2^B2-B5", picked: [] });
});

test("clocks in words", () => {
  assert.equal(formatClock(65_000), "1:05");
  assert.equal(formatClock(720_000), "12:00");
  assert.equal(formatClock(9_400), "0:09.4");
  assert.equal(formatClock(-5), "0:00.0");
  assert.equal(formatClock(3_723_000), "1:02:03");
  assert.equal(remaining(10_000, 1_000, true, 4_000), 7_000);
  assert.equal(remaining(10_000, 1_000, false, 4_000), 10_000);
  assert.equal(remaining(1_000, 0, true, 5_000), 0);
});

test("ZoxSo moves: a piece in hand then a Pearl, or a piece then its step, flip and move", () => {
  assert.deepEqual(zoxsoSteps("M@b2"), ["M@", "b2"]);
  assert.deepEqual(zoxsoSteps("b2-b3"), ["b2", "b3"]);
  assert.deepEqual(zoxsoSteps("C3-E4"), ["C3", "E4"]);
  assert.deepEqual(zoxsoSteps("b2^B2-B5"), ["b2", "B2", "B5"]);
  assert.deepEqual(zoxsoSteps("C3^c4"), ["C3", "c4"]);
  assert.deepEqual(zoxsoSteps("pass"), ["pass"]);
  const legal = ["M@b2", "D@b2", "M@a1"];
  assert.deepEqual(pick(legal, zoxsoSteps, [], "M@"), { picked: ["M@"] });
  assert.deepEqual(pick(legal, zoxsoSteps, ["M@"], "a1"), { move: "M@a1", picked: [] });
  // the other piece in hand instead
  assert.deepEqual(pick(legal, zoxsoSteps, ["M@"], "D@"), { picked: ["D@"] });
});
