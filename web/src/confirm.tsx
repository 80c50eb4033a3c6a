// ConfirmButton asks again in place before a destructive action (no
// window.confirm: it blocks the page and cannot be styled or translated).
import { useState } from 'preact/hooks';
import type { Strings } from './i18n';

export function ConfirmButton({ s, label, what, onConfirm, small }: { s: Strings; label: string; what: string; onConfirm: () => void; small?: boolean }) {
  // Asking is about one thing: picking another ends it, without an effect
  // (an effect that reset it ran after paint and could undo a click made
  // in between).
  const [askingFor, setAskingFor] = useState<string | null>(null);
  const asking = askingFor === what;
  const setAsking = (on: boolean) => setAskingFor(on ? what : null);
  const cls = 'danger' + (small ? ' small' : '');
  if (!asking)
    return (
      <button type="button" class={cls} aria-label={label + ' ' + what} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  return (
    <span class="confirm" role="group" aria-label={s.confirmDelete + ' ' + what}>
      <button
        type="button"
        class={cls + ' confirm-yes'}
        ref={(el) => el?.focus()}
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        {s.confirmDelete} {what}
      </button>{' '}
      <button type="button" class={small ? 'small' : ''} onClick={() => setAsking(false)}>
        {s.cancel}
      </button>
    </span>
  );
}
