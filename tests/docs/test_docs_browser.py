"""The built site in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver``, which ``make test`` installs) driven through Selenium. Every page is
loaded at 1280 px, a common laptop width (the pages of docs/ and the notebooks also at 800 px,
a narrow window; the highlighted module sources of the [source] links at 1280 px only): no
code block may need horizontal scrolling (its text wider than its box: the reader would not see the end of
a line), and every image must load (a figure the build did not draw, a broken link).

The site is the one tests/docs/test_docs_site.py checks, built once per session (``docs_site``,
tests/conftest.py); the scan takes about half a second per page and width.
"""

import shutil

import pytest

pytest.importorskip("selenium", reason="the test extra (pip install -e '.[test]') is not installed")

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
if not (CHROMIUM and CHROMEDRIVER):
    pytest.skip("no headless browser: make test installs it (apt-get install chromium "
                "chromium-driver)", allow_module_level=True)

#: The window widths the pages are read at.
WIDTHS = (1280, 800)
#: Generated index pages with no code or figures of their own.
SKIP = {"genindex.html", "search.html", "py-modindex.html"}

# After the page's load event: make lazy images load, wait until every image has loaded or
# failed, then measure. A code block is a <pre> that is shown (not inside a closed element).
SCAN = """
const done = arguments[arguments.length - 1];
const images = [...document.images];
images.forEach(img => { img.loading = "eager"; });
Promise.all(images.map(img => img.decode().catch(() => null))).then(() => {
  const blocks = [...document.querySelectorAll("pre")].filter(pre => pre.clientWidth > 0);
  done({
    blocks: blocks.length,
    clipped: blocks.filter(pre => pre.scrollWidth > pre.clientWidth + 1)
                   .map(pre => pre.textContent.trim().split("\\n")[0].slice(0, 80)),
    images: images.length,
    missing: images.filter(img => !img.complete || img.naturalWidth === 0)
                   .map(img => img.getAttribute("src")),
  });
});
"""


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--allow-file-access-from-files", "--window-size=1280,900"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(30)
    yield driver
    driver.quit()


def scan(driver, page, width):
    """What a reader of ``page`` sees at ``width`` CSS pixels: the counts of code blocks and
    images, the first line of each clipped block, the src of each image that did not load."""
    driver.set_window_size(width, 900)
    driver.get(page.as_uri())
    return driver.execute_async_script(SCAN)


def pages(site):
    return sorted(p for p in site.rglob("*.html")
                  if p.name not in SKIP and "_static" not in p.parts)


def test_no_code_block_scrolls_sideways_and_every_image_loads(docs_site, browser):
    found = {"blocks": 0, "images": 0}
    problems = []
    for page in pages(docs_site):
        name = page.relative_to(docs_site)
        for width in WIDTHS if "_modules" not in name.parts else WIDTHS[:1]:
            seen = scan(browser, page, width)
            found["blocks"] += seen["blocks"]
            problems += [f"{name} at {width} px: code block clipped: {line!r}"
                         for line in seen["clipped"]]
            if width == WIDTHS[0]:
                found["images"] += seen["images"]
                problems += [f"{name}: image not loaded: {src}" for src in seen["missing"]]
    assert not problems, "\n".join(problems)
    # the scan saw the site: its code blocks, and the figures and notebook plots
    assert found["blocks"] > 200 and found["images"] >= 10, found
