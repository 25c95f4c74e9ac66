// A message for the page the console goes to next ("… was erased." on the list after an
// erasure): set before the route changes, taken once by the page that shows it.

let pending: string | null = null;

export const leaveNotice = (text: string): void => {
  pending = text;
};

export function takeNotice(): string | null {
  const text = pending;
  pending = null;
  return text;
}
