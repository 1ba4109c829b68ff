import { Component, type ReactNode } from 'react';

/** The last line against a blank page: whatever a page throws is shown, with a way back. */
export class ErrorBoundary extends Component<{ children: ReactNode }, { error: Error | null }> {
  override state = { error: null as Error | null };

  static getDerivedStateFromError(error: Error) {
    return { error };
  }

  override render() {
    if (!this.state.error) return this.props.children;
    return (
      <main className="page">
        <h1>Something went wrong on this page</h1>
        <p className="error" role="alert">
          {this.state.error.message}
        </p>
        <p>
          <a href="/console/">Back to the projects</a>
        </p>
      </main>
    );
  }
}
