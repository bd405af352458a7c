// Diagrams stay readable on a phone. mermaid draws a diagram at its own size and lets it shrink
// to the width of the column, however narrow: on a 390 px phone, text would end up about 5 px
// high. This lets a diagram shrink only until its smallest text is SMALLEST_TEXT px; below that
// it keeps that size and its box scrolls sideways (layout.css).
//
// Loaded after mermaid and before Material's bundle (overrides/main.html). Material renders each
// diagram with mermaid.render() into a closed shadow root and then calls the result's `fn` with
// that root (mermaid itself names it bindFunctions; both are given), once the diagram is on the
// page: the one place a script can reach the drawing.
(() => {
  const SMALLEST_TEXT = 9;

  function keepReadable(root) {
    const svg = root && root.querySelector("svg");
    if (!svg || !svg.viewBox.baseVal) return;
    const texts = [...svg.querySelectorAll("*")].filter((element) =>
      [...element.childNodes].some((node) => node.nodeType === 3 && node.textContent.trim()));
    const sizes = texts.map((element) => parseFloat(getComputedStyle(element).fontSize));
    const smallest = Math.min(...sizes.filter((size) => size > 0));
    if (!Number.isFinite(smallest) || smallest <= SMALLEST_TEXT) return;
    // The drawing's own unit is a CSS pixel at its natural size (the viewBox), so text of
    // `smallest` px stays SMALLEST_TEXT px or more down to this width.
    const width = svg.viewBox.baseVal.width * (SMALLEST_TEXT / smallest);
    svg.style.minWidth = `${Math.ceil(width)}px`;
  }

  const render = mermaid.render.bind(mermaid);
  mermaid.render = async (...args) => {
    const result = await render(...args);
    const bind = result.bindFunctions;
    const then = (root) => {
      if (bind) bind(root);
      keepReadable(root);
    };
    return { ...result, fn: then, bindFunctions: then };
  };
})();
