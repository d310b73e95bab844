//! Rendering the page model ([`crate::page::Page`]) through the template
//! `templates/dashboard.html`, with the vendored chart library, the page's script and its styles
//! inlined (the page loads nothing).

use crate::DashboardError;
use crate::page::Page;
use minijinja::{Environment, context};

const TEMPLATE: &str = include_str!("../templates/dashboard.html");
const UPLOT_JS: &str = include_str!("../vendor/uplot/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../vendor/uplot/uPlot.min.css");
const UPLOT_LICENSE: &str = include_str!("../vendor/uplot/LICENSE");
const SCRIPT: &str = include_str!("../assets/dashboard.js");
const STYLE: &str = include_str!("../assets/dashboard.css");

/// The page as HTML.
pub fn render(page: &Page) -> Result<String, DashboardError> {
    let mut env = Environment::new();
    // The `.html` name turns on HTML auto-escaping of every value the template prints.
    env.add_template("dashboard.html", TEMPLATE)?;
    let html = env.get_template("dashboard.html")?.render(context! {
        page => page,
        uplot_js => UPLOT_JS,
        uplot_css => UPLOT_CSS,
        // The license travels with the code it covers, as a comment of the inlined script.
        uplot_license => UPLOT_LICENSE,
        script => SCRIPT,
        style => STYLE,
    })?;
    Ok(html)
}
