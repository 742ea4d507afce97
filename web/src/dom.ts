// A small helper to build DOM nodes: h("button", { class: "x", onclick: f }, "text").
type Attrs = Record<string, string | number | boolean | EventListener | undefined | null>;
export type Child = Node | string | number | null | undefined | false | Child[];

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

const SVG_NS = "http://www.w3.org/2000/svg";

export function s(tag: string, attrs: Attrs = {}, ...children: Child[]): SVGElement {
  const el = document.createElementNS(SVG_NS, tag) as SVGElement;
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

function setAttrs(el: Element, attrs: Attrs): void {
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value as EventListener);
    } else if (value === true) {
      el.setAttribute(key, "");
    } else {
      el.setAttribute(key, String(value));
    }
  }
}

function append(el: Element, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

export function clear(el: Element): void {
  while (el.firstChild) el.firstChild.remove();
}

/** Make an SVG element a button of the board: focusable, named (`label`), `key` as its
 * data-target, Enter/Space or a click call `act`; `ring` (appended, hidden) shows while it has
 * the focus, and `focused` is told when it gets it. */
export function svgButton(el: SVGElement, label: string, key: string, act: () => void, ring: SVGElement, focused?: () => void): void {
  el.setAttribute("tabindex", "0");
  el.setAttribute("role", "button");
  el.setAttribute("aria-label", label);
  el.setAttribute("data-target", key);
  el.setAttribute("cursor", "pointer");
  ring.setAttribute("visibility", "hidden");
  el.append(ring);
  el.addEventListener("click", act);
  el.addEventListener("keydown", (e) => {
    const k = (e as KeyboardEvent).key;
    if (k === "Enter" || k === " ") {
      e.preventDefault();
      act();
    }
  });
  el.addEventListener("focus", () => {
    ring.setAttribute("visibility", "visible");
    focused?.();
  });
  el.addEventListener("blur", () => ring.setAttribute("visibility", "hidden"));
}
