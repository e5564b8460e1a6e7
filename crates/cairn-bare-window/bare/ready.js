// Reports the first interactive frame, as the app's page does, with when its script ran
// and the frame came (milliseconds since navigation began).
const script = performance.now();
requestAnimationFrame(() =>
  requestAnimationFrame(() =>
    window.__TAURI_INTERNALS__.invoke("ui_ready", {
      page: "bare",
      marks: { origin: performance.timeOrigin, marks: { script, frame: performance.now() } },
    }),
  ),
);
