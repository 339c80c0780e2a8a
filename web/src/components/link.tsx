import type { ComponentChildren, JSX } from 'preact';
import { onLinkClick } from '../router.js';

type Props = { href: string; children: ComponentChildren } & Omit<JSX.HTMLAttributes<HTMLAnchorElement>, 'href' | 'onClick'>;

/** A real <a href> (so keyboard, middle-click and "copy link" work) that routes in-app on a plain click. */
export function Link({ href, children, ...rest }: Props) {
  return (
    <a href={href} onClick={(event) => onLinkClick(event, href)} {...rest}>
      {children}
    </a>
  );
}
