import { test } from "node:test";
import assert from "node:assert/strict";
import { moveKind, parseMove, sources, spaceWords, targets, visibleNest, type SpaceLike } from "../src/games/solace-moves";

const black = (size: number) => ({ colour: 1, size, hidden: false });
const clear = (size: number) => ({ colour: 2, size, hidden: false });
const hidden = (size: number) => ({ colour: 0, size, hidden: true });
const space = (name: string, state: number, nest: SpaceLike["nest"], tower: SpaceLike["tower"] = []): SpaceLike =>
  ({ name, row: name[0] === "B" ? 1 : 2, state, nest, tower });

test("Solace moves: the space left, then the space reached", () => {
  assert.deepEqual(parseMove("B2-B4"), ["B2", "B4"]);
  assert.equal(parseMove("stop"), undefined);
  const legal = ["B2-B4", "B2-C1", "C3-C1", "stop"];
  assert.deepEqual(sources(legal), ["B2", "C3"]);
  assert.deepEqual(targets(legal, "B2"), ["B4", "C1"]);
  assert.deepEqual(targets(legal, "C1"), []);
});

test("what a move is, from the position", () => {
  const spaces = [
    space("B1", 1, [black(3), hidden(2), hidden(1)]),
    space("B2", 1, [black(3), hidden(2), hidden(1)], [black(3)]),
    space("B3", 2, []),
    space("C1", 1, [clear(2), clear(1)]),
    space("C2", 1, [clear(3), clear(2), clear(1)], [clear(3), clear(2), clear(1)]),
  ];
  assert.equal(moveKind(spaces, "B1", "B2"), "build"); // onto a tower
  assert.equal(moveKind(spaces, "C1", "B2"), "build");
  assert.equal(moveKind(spaces, "C2", "B3"), "promotion");
  const fresh = [space("B1", 1, [black(3), hidden(2), hidden(1)]), space("B4", 1, [black(3), hidden(2), hidden(1)])];
  assert.equal(moveKind(fresh, "B1", "B4"), "foundation");
});

test("a black piece seals its nest: nothing inside it is named", () => {
  const sealed = space("B1", 1, [black(3), hidden(2), hidden(1)]);
  assert.deepEqual(visibleNest(sealed.nest), [black(3)]);
  assert.equal(spaceWords(sealed), "B1: nest of black 3, sealed (2 pieces unseen inside)");
  const seeThrough = space("C2", 1, [clear(3), black(2), hidden(1)], [clear(3)]);
  assert.equal(spaceWords(seeThrough), "C2: nest of clear 3 over black 2, sealed (1 piece unseen inside); clear tower 3 on it");
  assert.equal(spaceWords(space("C5", 2, [])), "C5: open");
  assert.equal(spaceWords(space("B5", 3, [], [black(3), black(2), black(1)])), "B5: promoted black tower 3-2-1");
});
