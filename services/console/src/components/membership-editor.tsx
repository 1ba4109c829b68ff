import { useState, type ReactNode } from 'react';
import { BusyButton, ErrorNote } from './feedback';
import { InlineForm } from './inline-form';
import { NamedOptions } from './named-options';

export interface Member {
  id: string;
  name: string;
  /** What the list shows for it; its name when absent. */
  label?: ReactNode;
}

/**
 * Group membership seen from one side (a device's groups, or a group's devices): the members, each
 * with its own Remove button, and a one-line form to add one of the candidates. A failed add keeps
 * the choice, so that Enter tries again; the API's detail shows under the form.
 */
export function MembershipEditor(props: {
  members: Member[];
  /** What may be added; members are left out here. */
  candidates: Member[];
  empty: string;
  /** The add field's label, and its placeholder option. */
  addLabel: string;
  choose: string;
  fieldId: string;
  /** How the Remove button of a member is announced to a screen reader. */
  removeLabel: (member: Member) => string;
  layout: 'chips' | 'list';
  busy: boolean;
  error: unknown;
  onRemove: (id: string) => void;
  /** Resolves once the member is added; rejects (the error shown by `error`) when it is not. */
  onAdd: (id: string) => Promise<unknown>;
}) {
  const [adding, setAdding] = useState('');
  const memberIds = new Set(props.members.map((member) => member.id));
  return (
    <>
      <ul className={props.layout === 'chips' ? 'chips' : 'plain'}>
        {props.members.length === 0 && <li className="muted">{props.empty}</li>}
        {props.members.map((member) => (
          <li key={member.id}>
            {member.label ?? member.name}{' '}
            <button type="button" className="small" aria-label={props.removeLabel(member)} onClick={() => props.onRemove(member.id)}>
              Remove
            </button>
          </li>
        ))}
      </ul>
      <InlineForm
        onSubmit={() => {
          if (adding) props.onAdd(adding).then(() => setAdding(''), () => undefined);
        }}
      >
        <label htmlFor={props.fieldId}>{props.addLabel}</label>
        <select id={props.fieldId} value={adding} onChange={(event) => setAdding(event.target.value)}>
          <option value="">{props.choose}</option>
          <NamedOptions items={props.candidates.filter((candidate) => !memberIds.has(candidate.id))} />
        </select>
        <BusyButton type="submit" busy={props.busy} disabled={!adding}>
          Add
        </BusyButton>
      </InlineForm>
      <ErrorNote error={props.error} />
    </>
  );
}
