// The page's side of the worker (worker.mjs): each call is a message
// { id, type, ...args } answered by { id, ok, result | error }; errors come
// back as Errors with the core's `code`.
export class WorkerClient {
  constructor(url, onCrash) {
    this.worker = new Worker(url, { type: 'module' });
    this.nextId = 1;
    this.pending = new Map();
    this.worker.onmessage = (e) => {
      const { id, ok, result, error } = e.data;
      const p = this.pending.get(id);
      this.pending.delete(id);
      if (ok) p.resolve(result);
      else p.reject(Object.assign(new Error(error.message), { code: error.code }));
    };
    this.worker.onerror = (e) => onCrash(`The worker failed: ${e.message}`);
  }

  call(type, args = {}, transfer = []) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, type, ...args }, transfer);
    });
  }
}
