/* Forms as GOV.UK's design system does them (issue 47, item 7). Progressive: without this script
 * the error summary is still at the top of the page, and a password field is a plain password field.
 *
 * - The error summary takes the focus when the page loads, so a screen reader reads it first and a
 *   keyboard user tabs from it into its links; a link moves the focus to its field.
 * - A password field's "Show" button (hidden until now) switches the field between hidden and
 *   shown text; its words come from the page, in the page's language.
 */
(function () {
  "use strict";

  function focusSummary() {
    var summary = document.querySelector("[data-error-summary]");
    if (summary && document.activeElement !== summary) summary.focus();
    if (!summary) return;
    summary.addEventListener("click", function (event) {
      var link = event.target.closest("a[href^='#']");
      var field = link && document.getElementById(link.getAttribute("href").slice(1));
      if (!field) return;
      event.preventDefault();
      var box = field.closest(".field, fieldset") || field;
      box.scrollIntoView();
      field.focus({ preventScroll: true });
    });
  }

  function passwordToggle(button) {
    var field = document.getElementById(button.getAttribute("aria-controls"));
    if (!field) return;
    button.hidden = false;
    button.addEventListener("click", function () {
      var show = field.type === "password";
      field.type = show ? "text" : "password";
      button.children[0].textContent = button.getAttribute(show ? "data-hide" : "data-show");
      button.children[1].textContent = button.getAttribute(show ? "data-hide-label" : "data-show-label");
    });
    // A shown password goes back to hidden before the form is sent, so the browser's
    // password manager sees a password field and no shown password stays on screen.
    if (field.form) {
      field.form.addEventListener("submit", function () {
        field.type = "password";
      });
    }
  }

  function start() {
    focusSummary();
    document.querySelectorAll(".password-toggle").forEach(passwordToggle);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
