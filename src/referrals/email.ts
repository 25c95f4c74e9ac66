// How referrals compare e-mail addresses: case-insensitively, and for Gmail (gmail.com,
// googlemail.com) without the dots and the +tag of the local part, which Gmail ignores:
// `Ada.Lovelace+x@gmail.com` is `adalovelace@gmail.com`.

export function emailKey(email: string): string {
  const lower = email.trim().toLowerCase();
  const at = lower.lastIndexOf('@');
  if (at < 0) return lower;
  let local = lower.slice(0, at);
  let domain = lower.slice(at + 1);
  if (domain === 'googlemail.com') domain = 'gmail.com';
  if (domain === 'gmail.com') local = local.split('+')[0]!.replace(/\./g, '');
  return `${local}@${domain}`;
}
