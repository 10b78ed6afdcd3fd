// A second click to be sure, for the buttons that end a game (resign,
// abort): the first click turns the button into "Confirm resign?" for a few
// seconds, the second does it. No dialog: nothing covers the board, and a
// slip of the mouse costs nothing.

const CONFIRM_MS = 4000;

/**
 * Makes `button` ask for a second click (its label then `question`) within
 * `ms` before `action` runs. `reset(button)` puts it back at once.
 */
export function confirmOnClick(button, question, action, ms = CONFIRM_MS) {
  button.addEventListener('click', () => {
    if (button.dataset.confirming) {
      reset(button);
      action();
      return;
    }
    button.dataset.label = button.textContent;
    button.dataset.confirming = '1';
    button.textContent = question;
    button.classList.add('confirming');
    button.setAttribute('aria-live', 'polite');
    button.confirmTimer = setTimeout(() => reset(button), ms);
  });
}

/** The button as it was before its first click. */
export function reset(button) {
  if (!button.dataset.confirming) return;
  clearTimeout(button.confirmTimer);
  delete button.dataset.confirming;
  button.textContent = button.dataset.label || button.textContent;
  button.classList.remove('confirming');
  button.removeAttribute('aria-live');
}
