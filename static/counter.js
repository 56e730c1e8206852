/* A visible character counter under every textarea with a maxlength (issue 26).
 *
 * Progressive: without this script the browser's maxlength still applies and the server still
 * refuses over-long text with a field error. With it, maxlength is lifted so pasted text is never
 * cut silently; the counter says how many characters are left, or how many too many, and the
 * server's check is what refuses. Screen readers hear the count when the field is focused (it
 * describes the field) and, once typing pauses, in a polite live region.
 */
(function () {
  "use strict";

  var format = new Intl.NumberFormat("en-GB");

  function words(remaining) {
    if (remaining >= 0) {
      return "You have " + format.format(remaining) + (remaining === 1 ? " character" : " characters") + " left";
    }
    var over = -remaining;
    return "You have " + format.format(over) + (over === 1 ? " character" : " characters") + " too many";
  }

  function attach(field) {
    var limit = parseInt(field.getAttribute("maxlength"), 10);
    if (!limit || !field.id) return;
    field.removeAttribute("maxlength");
    field.setAttribute("data-maxlength", String(limit));

    var visible = document.createElement("p");
    visible.className = "char-count";
    visible.id = field.id + "-count";
    var spoken = document.createElement("p");
    spoken.className = "visually-hidden";
    spoken.setAttribute("aria-live", "polite");
    field.insertAdjacentElement("afterend", visible);
    visible.insertAdjacentElement("afterend", spoken);

    var described = (field.getAttribute("aria-describedby") || "").split(" ").filter(Boolean);
    described.push(visible.id);
    field.setAttribute("aria-describedby", described.join(" "));

    var pause = null;
    function update(announce) {
      // Line breaks travel as CRLF in a form post; the server counts the text after making them LF.
      var remaining = limit - field.value.replace(/\r\n/g, "\n").length;
      visible.textContent = words(remaining);
      visible.classList.toggle("char-count-over", remaining < 0);
      if (announce) {
        clearTimeout(pause);
        pause = setTimeout(function () { spoken.textContent = words(remaining); }, 800);
      }
    }
    field.addEventListener("input", function () { update(true); });
    update(false);
  }

  function start() {
    var fields = document.querySelectorAll("textarea[maxlength]");
    for (var i = 0; i < fields.length; i++) attach(fields[i]);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
