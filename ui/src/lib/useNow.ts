import { useEffect, useState } from "react";

/** The current time at each render, with a re-render every `everyMs` (for "5 min ago" labels). */
export function useNow(everyMs = 60_000): number {
  const [, setTick] = useState(0);
  useEffect(() => {
    const id = window.setInterval(() => setTick((t) => t + 1), everyMs);
    return () => window.clearInterval(id);
  }, [everyMs]);
  return Date.now();
}
