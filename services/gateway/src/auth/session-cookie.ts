import type { Context } from 'koa';

/** The console's session cookie: HttpOnly, so no script can read it, and SameSite=Strict. */
export const SESSION_COOKIE = 'ota_session';

/** The header that carries the session's CSRF token on every mutating call made with the cookie. */
export const CSRF_HEADER = 'x-csrf-token';

export function setSessionCookie(ctx: Context, raw: string, expiresAt: Date): void {
  ctx.cookies.set(SESSION_COOKIE, raw, {
    httpOnly: true,
    sameSite: 'strict',
    // Secure whenever the request came over HTTPS (directly, or through a proxy that says so).
    secure: ctx.secure,
    path: '/',
    expires: expiresAt,
    overwrite: true,
  });
}

export function clearSessionCookie(ctx: Context): void {
  ctx.cookies.set(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'strict', secure: ctx.secure, path: '/', expires: new Date(0), overwrite: true });
}
