import type { ReactNode } from 'react';

/** A one-line form (label, field, button): Enter or its button submits it, without reloading the page. */
export function InlineForm({ onSubmit, children }: { onSubmit: () => void; children: ReactNode }) {
  return (
    <form
      className="inline"
      onSubmit={(event) => {
        event.preventDefault();
        onSubmit();
      }}
    >
      {children}
    </form>
  );
}
