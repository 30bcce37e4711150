// Injected by tests/report_html.rs into a copy of the report: measures every
// <svg> as laid out by the browser and writes the result as JSON into
// <pre id="probe">, which `chromium --dump-dom` carries out.
(function () {
  // Boxes touching by a pixel are fine: glyph boxes include line spacing.
  const SLACK = 1;
  const intersect = (a, b) =>
    a.left + SLACK < b.right && b.left + SLACK < a.right &&
    a.top + SLACK < b.bottom && b.top + SLACK < a.bottom;
  const outside = (inner, outer) =>
    inner.left < outer.left - SLACK || inner.right > outer.right + SLACK ||
    inner.top < outer.top - SLACK || inner.bottom > outer.bottom + SLACK;
  const charts = Array.from(document.querySelectorAll("svg")).map((svg) => {
    const box = svg.getBoundingClientRect();
    const texts = Array.from(svg.querySelectorAll("text"))
      .map((t) => ({ text: t.textContent.trim(), box: t.getBoundingClientRect() }))
      .filter((t) => t.text !== "");
    const overlaps = [];
    texts.forEach((a, i) => texts.slice(i + 1).forEach((b) => {
      if (intersect(a.box, b.box)) overlaps.push(a.text + " / " + b.text);
    }));
    return {
      title: texts.length ? texts[0].text : "",
      width: box.width,
      height: box.height,
      shapes: svg.querySelectorAll("rect, line, polyline, path, circle, polygon").length,
      texts: texts.length,
      overlaps: overlaps,
      clipped: texts.filter((t) => outside(t.box, box)).map((t) => t.text),
    };
  });
  const pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(charts);
  document.body.appendChild(pre);
})();
