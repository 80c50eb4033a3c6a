// The approval dialog: a run's approval_required event, answered with
// POST /wunder/runs/{run_id}/approvals/{approval_id} (docs/http.md#approvals).
// The arguments are edited in a form built from the tool's input schema
// (the catalog's input_schema; a param_required approval's `missing`)
// when it is simple enough, else as JSON.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, withUser } from './api';
import type { Strings } from './i18n';
import type { Approval, RunView } from './run';
import { formable, fromForm, SchemaForm, toForm } from './schemaform';

interface Props {
  s: Strings;
  run: RunView;
  schemaOf: (tool: string) => unknown;
  onError: (e: string) => void;
  /** onDecided is called once the server took a decision (the pending list reloads) */
  onDecided?: () => void;
  /** onClose, when set, lets the dialog close undecided (a Close button and Escape) */
  onClose?: () => void;
}

/**
 * ApprovalDialog shows the run's first pending approval. The run's
 * pending list can empty (approval_decided) before the chat redraws, while
 * the dialog still renders its own state: then it shows nothing.
 */
export function ApprovalDialog(p: Props) {
  const a = p.run.pending[0];
  return a ? <Dialog {...p} a={a} key={a.approval_id} /> : null;
}

function Dialog({ s, run, schemaOf, onError, onDecided, onClose, a }: Props & { a: Approval }) {
  const ref = useRef<HTMLDialogElement>(null);
  const schema = a.kind === 'param_required' && a.missing ? a.missing : schemaOf(a.tool);
  const canForm = formable(schema);
  const base = (a.arguments && typeof a.arguments === 'object' ? a.arguments : {}) as Record<string, unknown>;
  const [asJSON, setAsJSON] = useState(!canForm);
  const [vals, setVals] = useState<Record<string, string | boolean>>(() => (canForm ? toForm(schema, base) : {}));
  const [args, setArgs] = useState('');
  const [reason, setReason] = useState('');
  const [bad, setBad] = useState('');
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    setArgs(JSON.stringify(a.arguments ?? {}, null, 2));
    setAsJSON(!canForm);
    if (canForm) setVals(toForm(schema, base));
    setReason('');
    setBad('');
    const d = ref.current!;
    if (!d.open) d.showModal();
  }, [a.approval_id]);
  useEffect(() => () => ref.current?.close(), []);

  const offered = (d: string) => !a.decisions || a.decisions.includes(d);
  const decide = async (decision: string) => {
    const body: Record<string, unknown> = { decision };
    if (decision === 'edit' && !asJSON && canForm) {
      try {
        body.arguments = fromForm(schema, base, vals, s);
      } catch (e) {
        setBad((e as Error).message);
        return;
      }
    } else if (decision === 'edit') {
      try {
        const v = JSON.parse(args);
        if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error();
        body.arguments = v;
      } catch {
        setBad(s.invalidJSON);
        return;
      }
    }
    if (decision === 'reject' && reason.trim()) body.reason = reason.trim();
    setBusy(true);
    try {
      await api('POST', withUser(`/wunder/runs/${encodeURIComponent(run.runId)}/approvals/${encodeURIComponent(a.approval_id)}`), body);
      // the approval_decided event removes it from run.pending
      onDecided?.();
    } catch (e) {
      onError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <dialog
      ref={ref}
      class="approval"
      aria-labelledby="approval-title"
      onCancel={(e) => {
        e.preventDefault();
        onClose?.();
      }}
    >
      <h2 id="approval-title">
        {s.approvalTitle}: <code>{a.tool}</code>
      </h2>
      {a.reason && <p class="muted">{a.reason}</p>}
      {canForm && !asJSON ? (
        <fieldset>
          <legend>{s.arguments}</legend>
          <SchemaForm key={a.approval_id} schema={schema} vals={vals} onChange={(k, v) => setVals({ ...vals, [k]: v })} />
        </fieldset>
      ) : (
        <label>
          {s.arguments}
          <textarea class="mono" rows={8} value={args} onInput={(e) => setArgs((e.target as HTMLTextAreaElement).value)} />
        </label>
      )}
      {canForm && (
        <button
          type="button"
          class="ghost small"
          onClick={() => {
            // carry the edits over in both directions
            try {
              if (!asJSON) setArgs(JSON.stringify(fromForm(schema, base, vals, s), null, 2));
              else setVals(toForm(schema, JSON.parse(args)));
            } catch {
              /* keep what the other view had */
            }
            setAsJSON(!asJSON);
          }}
        >
          {asJSON ? s.editAsForm : s.editAsJSON}
        </button>
      )}
      {bad && (
        <p class="error" role="alert">
          {bad}
        </p>
      )}
      <label>
        {s.reason}
        <input value={reason} onInput={(e) => setReason((e.target as HTMLInputElement).value)} />
      </label>
      <div class="actions">
        {offered('approve') && (
          <button type="button" class="primary" disabled={busy} onClick={() => decide('approve')}>
            {s.approve}
          </button>
        )}
        {offered('edit') && (
          <button type="button" disabled={busy} onClick={() => decide('edit')}>
            {s.edit}
          </button>
        )}
        {offered('reject') && (
          <button type="button" disabled={busy} onClick={() => decide('reject')}>
            {s.reject}
          </button>
        )}
        {offered('cancel') && (
          <button type="button" class="danger" disabled={busy} onClick={() => decide('cancel')}>
            {s.cancelRun}
          </button>
        )}
        {onClose && (
          <button type="button" class="ghost close" onClick={onClose}>
            {s.close}
          </button>
        )}
      </div>
    </dialog>
  );
}
