// Times as people read them: "just now", "5 min ago", "yesterday", "3 Mar".

export function relativeTime(ms: number, now: number = Date.now()): string {
  const diff = now - ms;
  const future = diff < 0;
  const abs = Math.abs(diff);
  const min = Math.round(abs / 60_000);
  const say = (n: number, unit: string) => (future ? `in ${n} ${unit}` : `${n} ${unit} ago`);
  if (abs < 45_000) return future ? "in a moment" : "just now";
  if (min < 60) return say(min, "min");
  const hours = Math.round(abs / 3_600_000);
  if (hours < 24) return say(hours, hours === 1 ? "hour" : "hours");
  const days = Math.round(abs / 86_400_000);
  if (days === 1) return future ? "tomorrow" : "yesterday";
  if (days < 7) return say(days, "days");
  const d = new Date(ms);
  const sameYear = d.getFullYear() === new Date(now).getFullYear();
  return d.toLocaleDateString(undefined, sameYear ? { day: "numeric", month: "short" } : { day: "numeric", month: "short", year: "numeric" });
}

export function clockTime(ms: number): string {
  return new Date(ms).toLocaleString(undefined, { weekday: "short", hour: "2-digit", minute: "2-digit" });
}

/** "0.4 ms", "172 ms", "2.5 s", "3 min 4 s": whole milliseconds past ten (a search's time
 * comes in fractions). */
export function duration(ms: number): string {
  if (ms < 10) return `${Number(ms.toFixed(1))} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

export function count(n: number): string {
  return n.toLocaleString("en-US");
}

/** "1 file", "2 files", "1,204 chunks". */
export function counted(n: number, one: string, many: string): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}
