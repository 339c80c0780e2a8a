import { useEffect, useState } from 'preact/hooks';

/**
 * A filter input that applies its value when Enter is pressed or the field is left (not on every
 * keystroke, so typing does not ask the API once per character). It follows `value` when the URL
 * changes under it (back button, "Clear filters").
 */
export function AppliedInput({
  value,
  onApply,
  type = 'search',
  ...rest
}: {
  value: string;
  onApply: (value: string | null) => void;
  type?: 'search' | 'number';
  placeholder?: string;
  list?: string;
  min?: number;
  step?: string;
  maxLength?: number;
  class?: string;
  'aria-label'?: string;
  'data-testid'?: string;
}) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  const apply = () => {
    const next = text.trim();
    if (next !== value) onApply(next || null);
  };
  return (
    <input
      type={type}
      value={text}
      onInput={(e) => setText((e.target as HTMLInputElement).value)}
      onKeyDown={(e) => {
        if (e.key === 'Enter') apply();
      }}
      onBlur={apply}
      {...rest}
    />
  );
}
