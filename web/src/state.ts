// A minimal observable value, so a few app-wide settings (language, theme,
// identity) need no state library.
import { useEffect, useState } from 'preact/hooks';

export interface Signal<T> {
  get(): T;
  set(v: T): void;
  subscribe(fn: (v: T) => void): () => void;
}

export function signal<T>(initial: T): Signal<T> {
  let value = initial;
  const subs = new Set<(v: T) => void>();
  return {
    get: () => value,
    set(v) {
      value = v;
      subs.forEach((f) => f(v));
    },
    subscribe(fn) {
      subs.add(fn);
      return () => subs.delete(fn);
    },
  };
}

export function useSignal<T>(s: Signal<T>): T {
  const [v, setV] = useState(s.get());
  useEffect(() => {
    const off = s.subscribe(setV);
    // effects run after paint: a change between the render and now
    // (a language switched as the page mounts) would be missed otherwise
    setV(s.get());
    return off;
  }, [s]);
  return v;
}
