// Reports the first interactive frame, as the app's page does.
requestAnimationFrame(() =>
  requestAnimationFrame(() => window.__TAURI_INTERNALS__.invoke("ui_ready", { page: "bare" })),
);
