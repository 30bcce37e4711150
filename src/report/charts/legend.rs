//! A legend strip: a coloured swatch and a label per entry, left to right,
//! wrapping, in a strip of its own so it never hides what it explains.
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{CAPTION_SIZE, CHART_WIDTH, FONT, INK, MARGIN, Y_AXIS_WIDTH, label_font, text_width};

pub(super) struct Legend {
    entries: Vec<(String, RGBColor)>,
    /// Top-left corner of each entry's swatch, in the strip.
    positions: Vec<(i32, i32)>,
    pub(super) height: u32,
}

const LEGEND_ROW_HEIGHT: u32 = 20;
const LEGEND_SWATCH_WIDTH: i32 = 14;
const LEGEND_GAP: i32 = 22;

impl Legend {
    /// A legend over the plot of a line chart (between its y axis and its
    /// right margin).
    pub(super) fn new(entries: Vec<(String, RGBColor)>) -> Legend {
        let first_x = (MARGIN + Y_AXIS_WIDTH) as i32;
        let last_x = (CHART_WIDTH - MARGIN) as i32;
        Legend::between(entries, first_x, last_x)
    }

    /// A legend whose entries start at `first_x` and wrap before `last_x`.
    pub(super) fn between(entries: Vec<(String, RGBColor)>, first_x: i32, last_x: i32) -> Legend {
        let (mut x, mut row) = (first_x, 0);
        let mut positions = Vec::with_capacity(entries.len());
        for (label, _) in &entries {
            let width = LEGEND_SWATCH_WIDTH + 6 + text_width(label);
            if x > first_x && x + width > last_x {
                (x, row) = (first_x, row + 1);
            }
            positions.push((x, row * LEGEND_ROW_HEIGHT as i32 + 4));
            x += width + LEGEND_GAP;
        }
        let rows = if entries.is_empty() { 0 } else { row + 1 };
        Legend {
            entries,
            positions,
            height: rows as u32 * LEGEND_ROW_HEIGHT,
        }
    }

    /// Draws the title and the legend; returns the area left for the plot.
    pub(super) fn draw_under_title<'a>(
        &self,
        root: &DrawingArea<SVGBackend<'a>, Shift>,
        title: &str,
    ) -> anyhow::Result<DrawingArea<SVGBackend<'a>, Shift>> {
        let body = root
            .margin(MARGIN / 2, 0, 0, 0)
            .titled(title, (FONT, CAPTION_SIZE).into_font().color(&INK))?;
        let (strip, plot) = body.split_vertically(self.height);
        self.draw(&strip)?;
        Ok(plot)
    }

    /// Draws the entries on `strip`, a strip `height` px high.
    pub(super) fn draw(&self, strip: &DrawingArea<SVGBackend<'_>, Shift>) -> anyhow::Result<()> {
        let half_row = LEGEND_ROW_HEIGHT as i32 / 2 - 4;
        for ((label, color), &(x, y)) in self.entries.iter().zip(&self.positions) {
            strip.draw(&Rectangle::new(
                [
                    (x, y + half_row - 5),
                    (x + LEGEND_SWATCH_WIDTH, y + half_row + 5),
                ],
                color.filled(),
            ))?;
            strip.draw(&Text::new(
                label.clone(),
                (x + LEGEND_SWATCH_WIDTH + 6, y + half_row),
                label_font().pos(Pos::new(HPos::Left, VPos::Center)),
            ))?;
        }
        Ok(())
    }
}
