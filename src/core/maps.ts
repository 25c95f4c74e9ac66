// Small helpers for the maps that group rows by a key.

/** Appends `value` to the list `map` holds under `key`, starting the list when there is none. */
export function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}
