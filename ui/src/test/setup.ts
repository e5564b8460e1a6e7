import "@testing-library/jest-dom/vitest";
import { cleanup, configure } from "@testing-library/react";
import { afterEach, beforeAll } from "vitest";

// jsdom has no layout; CodeMirror asks for rectangles when it measures and scrolls.
const rect = { x: 0, y: 0, top: 0, left: 0, bottom: 0, right: 0, width: 0, height: 0, toJSON: () => ({}) } as DOMRect;
const rects = Object.assign([], { item: () => null }) as unknown as DOMRectList;
Range.prototype.getBoundingClientRect = () => rect;
Range.prototype.getClientRects = () => rects;
if (!Element.prototype.scrollIntoView) Element.prototype.scrollIntoView = () => undefined;

// findBy/waitFor wait for what a user would see. On a loaded 2-core machine the first CodeMirror
// mount in jsdom can take longer than the library's 1 s default; the tests' 20 s limit still applies.
configure({ asyncUtilTimeout: 5_000 });

// State changes from backend events and timers land outside act(); waitFor/findBy wait for them.
beforeAll(() => {
  (globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = false;
});

afterEach(() => {
  cleanup();
  localStorage.clear();
});
