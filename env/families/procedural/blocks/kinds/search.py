"""The ``search`` kind: product search with cached results.

``build`` writes the module a service with this kind holds and the tests every such service carries;
the tests that reveal a particular defect live with the defect, in ``bugs``."""

from __future__ import annotations

from env.families.procedural.blocks.world import Module, Ref, World, lit, q, render, t


def build(w: World, present: frozenset[str]) -> Module:
    ref = Ref(w)
    index = ref.index()
    cat = w.doubles[1]
    word = ref.words(w.a.name)[0]
    new = w.unused_sku()
    names = {p.sku: p.name for p in w.products}
    labels = [f"{names[sku]} ({sku})" for sku in sorted(index[cat])[:5]]
    source = render(
        '''
        """Product search for $pkg over names and categories, with cached results.

            search("$word")          # SKUs matching every word, sorted
            suggest("$cat", 3)       # labels for an autocomplete box
            rebuild()                # after the catalog changed
        """

        from __future__ import annotations

        import logging
        import re

        from $pkg import cache, catalog

        log = logging.getLogger(__name__)

        _INDEX: dict[str, list[str]] = {}
        _RESULTS = cache.Cache("search", 64)


        def words(text: str) -> list[str]:
            return [word for word in re.split(r"[^a-z0-9]+", text.lower()) if word]


        def rebuild() -> int:
            """Index every product's name and category; returns the number of words indexed."""
            _INDEX.clear()
            for category in catalog.categories():
                for product in catalog.in_category(category):
                    for word in words(product.name) + [category]:
                        skus = _INDEX.setdefault(word, [])
                        if product.sku not in skus:
                            skus.append(product.sku)
            _RESULTS.invalidate()
            log.info("search index rebuilt: %d words", len(_INDEX))
            return len(_INDEX)


        def search(query: str) -> list[str]:
            """SKUs of the products matching every word of ``query``, sorted."""
            key = " ".join(words(query))
            cached = _RESULTS.get(key)
            if cached is not None:
                return cached
            terms = key.split()
            found = set(_INDEX.get(terms[0], [])) if terms else set()
            for term in terms[1:]:
                found &= set(_INDEX.get(term, []))
            result = sorted(found)
            _RESULTS.put(key, result)
            log.info("search %r: %d results", query, len(result))
            return result


        def suggest(query: str, limit: int = 3) -> list[str]:
            """Product labels for an autocomplete box, at most ``limit``."""
            skus = list(search(query))
            del skus[limit:]
            return [catalog.get(sku).label() for sku in skus]


        def reset() -> None:
            rebuild()


        rebuild()
        ''',
        pkg=w.pkg, word=word, cat=cat,
    )
    tests = [
        t("test_search_matches_every_word", f"""
            assert search.search({q(cat)}) == {lit(sorted(index[cat]))}
            assert search.search({q(word.upper())}) == {lit(sorted(index[word]))}
        """, ("search",)),
        t("test_unknown_words_find_nothing", """
            assert search.search("xylophonic") == []
            assert search.search("") == []
        """, ("search",)),
        t("test_new_products_are_found_after_a_rebuild", f"""
            catalog.add({q(new)}, "Xylophonic Edition", {q(cat)}, 999, 300)
            assert search.search("xylophonic") == []
            search.rebuild()
            assert search.search("xylophonic") == [{q(new)}]
        """, ("search", "catalog")),
        t("test_suggestions_are_labels", f"""
            assert search.suggest({q(cat)}, 5) == {lit(labels)}
        """, ("search",)),
    ]
    return Module(source, tests)
