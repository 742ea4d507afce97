import { test } from "node:test";
import assert from "node:assert/strict";
import { cardName, cardSymbol, colourOf, sortedHand } from "../src/games/solo-cards";
import { advance, jumpIns, parsePlay, playableCards, steps } from "../src/games/solo-moves";

test("Solo cards in words", () => {
  assert.equal(cardName("r7"), "Red 7");
  assert.equal(cardName("bS"), "Blue Skip");
  assert.equal(cardName("gD"), "Green Draw Two");
  assert.equal(cardName("yX"), "Yellow Swap");
  assert.equal(cardName("W4"), "Wild Draw Four");
  assert.equal(cardName("WX"), "Swap-in-turn");
  assert.equal(colourOf("W"), "k");
  assert.equal(cardSymbol("rD"), "+2");
  assert.deepEqual(sortedHand(["W", "y1", "r9", "r2", "gS"]).map((c) => c.card), ["r2", "r9", "gS", "y1", "W"]);
  // duplicates keep the hand's order, and each card its index
  assert.deepEqual(sortedHand(["r7", "b1", "r7"]).map((c) => c.index), [0, 2, 1]);
});

test("Solo moves are parsed part by part", () => {
  assert.deepEqual(parsePlay("play W4:b!"), { move: "play W4:b!", card: "W4", colour: "b", target: undefined, call: true });
  assert.deepEqual(parsePlay("play gX@2"), { move: "play gX@2", card: "gX", colour: "", target: 2, call: false });
  assert.equal(parsePlay("draw"), undefined);
  assert.deepEqual(steps("play r5"), ["card:r5", "call:no"]);
  assert.deepEqual(steps("play W:y"), ["card:W", "colour:y", "call:no"]);
  assert.deepEqual(steps("pass"), ["pass"]);
});

test("a card with one form plays at once; choices come one kind at a time", () => {
  const legal = ["play r5", "play W:r", "play W:g", "play W:b", "play W:y", "play gX@1", "play gX@2", "play gX@2!", "draw"];
  assert.deepEqual([...playableCards(legal)].sort(), ["W", "gX", "r5"]);
  assert.equal(advance(legal, ["card:r5"]).move, "play r5");
  const wild = advance(legal, ["card:W"]);
  assert.equal(wild.move, undefined);
  assert.deepEqual(wild.choices, ["colour:r", "colour:g", "colour:b", "colour:y"]);
  assert.equal(advance(legal, [...wild.picked, "colour:b"]).move, "play W:b");
  const swap = advance(legal, ["card:gX"]);
  assert.deepEqual(swap.choices, ["target:1", "target:2"]);
  assert.equal(advance(legal, [...swap.picked, "target:1"]).move, "play gX@1");
  const call = advance(legal, [...swap.picked, "target:2"]);
  assert.deepEqual(call.choices, ["call:yes", "call:no"]);
  assert.equal(advance(legal, [...call.picked, "call:yes"]).move, "play gX@2!");
  assert.equal(advance(legal, ["draw"]).move, "draw");
});

test("jump-ins are the plays of a seat that is not to move", () => {
  assert.deepEqual(jumpIns(["play r7", "play r7!"], false), ["play r7", "play r7!"]);
  assert.deepEqual(jumpIns(["play r7", "draw"], true), []);
  assert.deepEqual(jumpIns([], false), []);
});
