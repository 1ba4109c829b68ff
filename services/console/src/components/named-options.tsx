/** `<option>`s for a select of named things (groups, channels, devices), by id. */
export function NamedOptions({ items }: { items: Array<{ id: string; name: string }> | undefined }) {
  return (
    <>
      {items?.map((item) => (
        <option key={item.id} value={item.id}>
          {item.name}
        </option>
      ))}
    </>
  );
}
