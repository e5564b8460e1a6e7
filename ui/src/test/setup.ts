import "@testing-library/jest-dom/vitest";
import { cleanup } from "@testing-library/react";
import { afterEach, beforeAll } from "vitest";

// jsdom has no layout; CodeMirror asks for rectangles when it measures and scrolls.
const rect = { x: 0, y: 0, top: 0, left: 0, bottom: 0, right: 0, width: 0, height: 0, toJSON: () => ({}) } as DOMRect;
const rects = Object.assign([], { item: () => null }) as unknown as DOMRectList;
Range.prototype.getBoundingClientRect = () => rect;
Range.prototype.getClientRects = () => rects;
if (!Element.prototype.scrollIntoView) Element.prototype.scrollIntoView = () => undefined;

// State changes from backend events and timers land outside act(); waitFor/findBy wait for them.
beforeAll(() => {
  (globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = false;
});

afterEach(() => {
  cleanup();
  localStorage.clear();
});
