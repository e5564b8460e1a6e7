import { memo, useEffect, useRef, useState, type ClipboardEvent, type KeyboardEvent } from "react";
import { toAppError } from "../api/errors";
import type { Picture, QueueMode, SlashCommand } from "../api/types";
import { useBackend } from "../lib/backendContext";
import { useAppEvents } from "../lib/hub";
import { base64Of } from "../lib/pictures";
import type { Notify } from "../state/useToasts";
import { Icon } from "./Icon";
import { COMPOSER_THUMB, PictureThumb, usePictureViewer } from "./Pictures";

/** A picture in the message box: kept by the backend, or still on its way there. */
interface Attached {
  key: number;
  name: string;
  picture: Picture | null;
}

/** The pictures of a clipboard: files whose type is an image. */
function clipboardPictures(data: DataTransfer): File[] {
  const files = [...data.files].filter((f) => f.type.startsWith("image/"));
  if (files.length > 0) return files;
  return [...data.items].flatMap((item) => {
    const file = item.kind === "file" && item.type.startsWith("image/") ? item.getAsFile() : null;
    return file ? [file] : [];
  });
}

/** The message box: Enter sends (or steers a running run), Alt+Enter queues a follow-up
 * while a run works (the core sends it where the run would end, and the run goes on),
 * Shift+Enter adds a line, Esc stops. Pictures come by paste, drop or the picture button,
 * show as thumbnails (× takes one out) and go with the next message sent; a message may
 * be pictures alone. */
export const Composer = memo(function Composer({
  running,
  disabled,
  focusKey,
  onSend,
  onSteer,
  onStop,
  queued,
  returned,
  onQueue,
  onDrop,
  queueMode,
  notify,
}: {
  running: boolean;
  disabled: boolean;
  /** Changing it moves the focus here (a session was opened). */
  focusKey: string | null;
  onSend(text: string, pictures: Picture[]): void;
  onSteer(text: string): void;
  onStop(): void;
  /** The follow-ups the core holds, oldest first. */
  queued: string[];
  /** Follow-ups given back undelivered: put back in the box. */
  returned: { texts: string[]; seq: number } | null;
  onQueue(text: string): void;
  onDrop(index: number): void;
  /** How queued follow-ups are delivered, as the settings say. */
  queueMode: QueueMode;
  notify: Notify;
}) {
  const backend = useBackend();
  const [text, setText] = useState("");
  const ref = useRef<HTMLTextAreaElement>(null);
  const [dragging, setDragging] = useState(false);
  const [attached, setAttached] = useState<Attached[]>([]);
  const [commands, setCommands] = useState<SlashCommand[] | null>(null);
  const [picked, setPicked] = useState(0);
  const [menuClosed, setMenuClosed] = useState(false);
  // `/` then a name being typed: the prompt templates and skills that start with it.
  const slash = /^\/([a-z0-9_-]*)$/.exec(text);
  const offered = slash && commands && !menuClosed ? commands.filter((c) => c.name.startsWith(slash[1] ?? "")) : [];
  const slashing = slash !== null;
  useEffect(() => {
    if (!slashing) {
      setMenuClosed(false);
      return;
    }
    if (commands !== null) return;
    backend
      .slashCommands()
      .then(setCommands)
      .catch(() => setCommands([]));
  }, [slashing, commands, backend]);
  useEffect(() => setPicked(0), [text]);
  const pickCommand = (c: SlashCommand) => {
    setText(`/${c.name} `);
    ref.current?.focus();
  };
  const [mode, setMode] = useState<QueueMode>(queueMode);
  useEffect(() => setMode(queueMode), [queueMode]);
  const chooseMode = (next: QueueMode) => {
    const was = mode;
    setMode(next);
    backend.setFollowUpMode(next).catch((e: unknown) => {
      setMode(was);
      notify(toAppError(e));
    });
  };
  const [show, overlay] = usePictureViewer();
  const nextKey = useRef(0);
  const add = (name: string, picture: Picture | null): number => {
    nextKey.current += 1;
    const key = nextKey.current;
    setAttached((a) => [...a, { key, name, picture }]);
    return key;
  };
  const remove = (key: number) => setAttached((a) => a.filter((x) => x.key !== key));
  // Files dropped onto the window are in the workspace now: the message refers to them;
  // pictures dropped were kept for the message and show in the box.
  useAppEvents((e) => {
    if (e.type === "drag_over") setDragging(e.active);
    if (e.type !== "files_dropped") return;
    setDragging(false);
    e.pictures.forEach((p) => add(p.name ?? "picture", p));
    if (e.added.length > 0) {
      const refs = e.added.map((p) => `Attached: \`${p}\``).join("\n");
      setText((t) => (t.trim() ? `${t.replace(/\s+$/, "")}\n${refs}\n` : `${refs}\n`));
    }
    if (e.added.length > 0 || e.pictures.length > 0) ref.current?.focus();
  });

  /** Sends a picture's bytes to be kept; shown as loading until then, taken out if refused. */
  const attachFile = (file: File) => {
    const name = file.name || "pasted picture";
    const key = add(name, null);
    base64Of(file)
      .then((data) => backend.attachPicture(file.name || null, data))
      .then((picture) => setAttached((a) => a.map((x) => (x.key === key ? { ...x, picture } : x))))
      .catch((e: unknown) => {
        remove(key);
        notify(toAppError(e));
      });
  };

  const onPaste = (e: ClipboardEvent<HTMLTextAreaElement>) => {
    if (!e.clipboardData || disabled) return;
    const files = clipboardPictures(e.clipboardData);
    if (files.length === 0) return;
    // A screenshot has no text; a copied web page may have both, and its text still pastes.
    if (!e.clipboardData.types.includes("text/plain")) e.preventDefault();
    files.forEach(attachFile);
  };

  const pick = () => {
    backend
      .pickPictures()
      .then((picked) => {
        picked.pictures.forEach((p) => add(p.name ?? "picture", p));
        if (picked.refused.length > 0) notify(`Not attached: ${picked.refused.map((r) => `${r.name} (${r.reason})`).join("; ")}`, "error");
        ref.current?.focus();
      })
      .catch((e: unknown) => notify(toAppError(e)));
  };
  // Follow-ups the core gave back undelivered (the run was stopped or failed) return to
  // the message box, so nothing typed is lost.
  const lastReturn = useRef(returned?.seq ?? 0);
  useEffect(() => {
    if (!returned || returned.seq === lastReturn.current) return;
    lastReturn.current = returned.seq;
    const back = returned.texts.join("\n\n");
    setText((t) => (t.trim() ? `${back}\n\n${t}` : back));
  }, [returned]);

  useEffect(() => {
    // Never take the focus from another field (renaming a session, the editor ...).
    const active = document.activeElement as HTMLElement | null;
    const typing = active && active !== ref.current && (/^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName) || active.isContentEditable);
    if (!typing) ref.current?.focus();
  }, [focusKey]);

  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    el.style.height = "auto";
    // Empty, the box is one row high: a placeholder that wraps (a narrow window, the
    // longer one while a run goes on) must not make it grow.
    if (!text) return;
    el.style.height = `${Math.min(el.scrollHeight, 240)}px`;
  }, [text]);

  const waiting = attached.some((a) => a.picture === null);
  const pictures = attached.flatMap((a) => (a.picture ? [a.picture] : []));
  // Steering takes text only: pictures wait in the box for the next message.
  const canSend = !disabled && (running ? text.trim() !== "" : !waiting && (text.trim() !== "" || pictures.length > 0));

  const submit = () => {
    const value = text.trim();
    if (!canSend) return;
    if (running) onSteer(value);
    else {
      onSend(value, pictures);
      setAttached([]);
    }
    setText("");
  };

  const queue = () => {
    const value = text.trim();
    if (!value || disabled || !running) return;
    onQueue(value);
    setText("");
  };

  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (offered.length > 0) {
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        const step = e.key === "ArrowDown" ? 1 : offered.length - 1;
        setPicked((picked + step) % offered.length);
        return;
      }
      if ((e.key === "Enter" && !e.shiftKey && !e.altKey) || e.key === "Tab") {
        e.preventDefault();
        const chosen = offered[picked];
        if (chosen) pickCommand(chosen);
        return;
      }
      if (e.key === "Escape") {
        e.preventDefault();
        e.stopPropagation();
        setMenuClosed(true);
        return;
      }
    }
    if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      if (e.altKey) queue();
      else submit();
    }
  };

  return (
    <div className={dragging ? "composer-wrap dragging" : "composer-wrap"}>
      {dragging && (
        <div className="drop-hint" data-testid="drop-hint">
          Drop pictures (PNG, JPEG, WebP, GIF) to send them with your message, or notes and documents (PDF, DOCX, ODT, EPUB, HTML) to add them to <code>knowledge/inbox/</code> and refer to them
        </div>
      )}
      {queued.length > 0 && (
        <ul className="queued" aria-label="Queued follow-ups" data-testid="queued">
          <li className="queued-mode">
            <label>
              Deliver{" "}
              <select data-testid="queue-mode" value={mode} onChange={(e) => chooseMode(e.target.value as QueueMode)}>
                <option value="all">all at once</option>
                <option value="one-at-a-time">one at a time</option>
              </select>
            </label>
          </li>
          {queued.map((q, i) => (
            <li key={`${i}-${q}`} className="queued-item">
              <span className="queued-label">{i === 0 ? "Next" : "Queued"}</span>
              <span className="queued-text" title={q}>
                {q}
              </span>
              <button type="button" className="icon-button small" aria-label={`Drop the follow-up: ${q}`} onClick={() => onDrop(i)}>
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      {offered.length > 0 && (
        <ul className="slash-menu" role="listbox" aria-label="Prompt templates and skills" data-testid="slash-menu">
          {offered.map((c, i) => (
            <li
              key={c.name}
              role="option"
              aria-selected={i === picked}
              className={i === picked ? "slash-option picked" : "slash-option"}
              data-testid="slash-option"
              onMouseDown={(e) => {
                e.preventDefault();
                pickCommand(c);
              }}
            >
              <code>{c.usage}</code> <span className="badge">{c.kind}</span> <span className="muted">{c.description}</span>
            </li>
          ))}
        </ul>
      )}
    <div className="composer">
      <button type="button" className="icon-button attach-button" data-testid="attach-picture" aria-label="Attach pictures" title="Attach pictures (PNG, JPEG, WebP, GIF); you can also paste or drop them" disabled={disabled} onClick={pick}>
        <Icon name="image" size={18} />
      </button>
      <div className="composer-field">
        {attached.length > 0 && (
          <ul className="composer-pictures" aria-label="Pictures for the message" data-testid="composer-pictures">
            {attached.map((a) => (
              <li key={a.key} className="composer-picture" data-testid="composer-picture" data-ready={a.picture !== null}>
                {a.picture ? (
                  <PictureThumb picture={a.picture} box={COMPOSER_THUMB} onOpen={() => a.picture && show(a.picture)} />
                ) : (
                  <span className="picture-thumb pending" title={`Reading ${a.name}…`} style={{ width: COMPOSER_THUMB.height, height: COMPOSER_THUMB.height }}>
                    <span className="spinner" aria-label={`Reading ${a.name}`} />
                  </span>
                )}
                <button type="button" className="picture-remove" aria-label={`Remove ${a.name}`} title="Remove" onClick={() => remove(a.key)}>
                  ×
                </button>
              </li>
            ))}
          </ul>
        )}
        <textarea
          ref={ref}
          data-testid="composer"
          aria-label={running ? "Steer the run" : "Message"}
          placeholder={running ? "Steer: add a message to the running answer…" : "Message Cairn…"}
          rows={1}
          value={text}
          disabled={disabled}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={onKey}
          onPaste={onPaste}
        />
      </div>
      <div className="composer-buttons">
        {running && (
          <button
            type="button"
            className="stop"
            data-testid="stop-button"
            onClick={onStop}
            title="Stop (Esc)"
          >
            <Icon name="stop" size={14} /> Stop
          </button>
        )}
        {running && (
          <button type="button" data-testid="queue-button" onClick={queue} disabled={disabled || !text.trim()} title="Send when this run ends (Alt+Enter)">
            Queue
          </button>
        )}
        <button type="button" className="primary" data-testid="send-button" onClick={submit} disabled={!canSend} title={running ? (pictures.length ? "Send the text to the running answer (Enter); pictures wait for your next message" : "Send to the running answer (Enter)") : "Send (Enter)"}>
          {running ? "Steer" : "Send"}
          <Icon name="send" size={14} />
        </button>
      </div>
    </div>
      {overlay}
    </div>
  );
});
