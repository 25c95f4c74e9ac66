import { say, section, type View } from '../model.js';

/** The shopper's birthday once told; until then a form to tell it (PUT /me/birthday), with what it brings. */
export function birthday({ state, me, w }: View): string {
  if (me.birthday !== null) return section('birthday', w.t('birthday'), `<p>${say(w, 'birthday_is', { date: w.birthday(me.birthday) })}</p>`);
  const rule = state.programme?.earning_rules.find((r) => r.kind === 'birthday' && r.points_amount !== null);
  const why = rule === undefined ? say(w, 'birthday_ask_plain') : say(w, 'birthday_ask', { points: w.points(rule.points_amount!) });
  const today = new Date().toISOString().slice(0, 10);
  return section(
    'birthday',
    w.t('birthday'),
    `<p>${why}</p><form data-action="birthday" class="row"><label for="birthday-input">${say(w, 'birthday')}</label>
      <input id="birthday-input" name="birthday" type="date" required min="1900-01-01" max="${today}">
      <button type="submit" ${state.busy === null ? '' : 'disabled'}>${say(w, 'birthday_save')}</button></form>`,
  );
}
