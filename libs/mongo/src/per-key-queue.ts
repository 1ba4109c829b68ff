/**
 * Runs the tasks given for one key one after another, in the order given; tasks of different keys
 * run concurrently. FerretDB v1 runs an update as read-then-write of the whole document, so two
 * concurrent `$set`s of different fields of one document can lose one of them; a process that
 * sends its writes to a document one at a time through this queue cannot lose its own. (MongoDB
 * applies each update atomically and needs none of this; writers in other processes are not
 * covered, see docs/architecture.md.)
 */
export class PerKeyQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    // Forget the key once its last task is done, so that the map holds only keys with work queued.
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  get size(): number {
    return this.tails.size;
  }
}
