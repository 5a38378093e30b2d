// A store whose nth call (the first by default) of one method waits until the test releases it,
// after the call returned (a read) or before it runs (a write): a decision caught between its
// read and its write, while another process decides meanwhile.
export function pauseAtCall<T extends object>(
  inner: T,
  method: keyof T & string,
  o: { nth?: number; before?: boolean } = {},
): { target: T; reached: Promise<void>; release: () => void } {
  const nth = o.nth ?? 1;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let reach!: () => void;
  const reached = new Promise<void>((r) => (reach = r));
  let calls = 0;
  const target = new Proxy(inner, {
    get(t, prop, receiver) {
      const v = Reflect.get(t, prop, receiver) as unknown;
      if (typeof v !== "function") return v;
      if (prop !== method) return v.bind(t);
      return async (...args: unknown[]) => {
        const hold = ++calls === nth;
        if (hold && o.before) {
          reach();
          await gate;
        }
        const out = await (v as (...a: unknown[]) => Promise<unknown>).apply(t, args);
        if (hold && !o.before) {
          reach();
          await gate;
        }
        return out;
      };
    },
  });
  return { target, reached, release };
}
