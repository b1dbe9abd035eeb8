package typed

import (
	"cmp"
	"math"
	"slices"
	"strings"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// Match is a fact with its relevance to a query.
type Match struct {
	// Fact is the candidate as given (not copied).
	Fact *ahpv1.Fact
	// Index is the fact's position in the candidates; session memory lists facts most recent
	// first, so a lower index is more recent.
	Index int
	// Score is the normalised relevance in (0, 1]: 1 means every query term appears in the fact.
	Score float64
}

// prefixCredit is what a prefix match ("auth" in "authentication") earns against an exact one.
const prefixCredit = 0.5

// minPrefix is the shortest word that takes part in prefix matching; shorter ones match too much.
const minPrefix = 4

// Rank scores facts against query and returns those sharing at least one term with it, best first.
//
// Query and facts are split into terms (lower-cased words, camel-case parts, stop-words dropped,
// light stemming). Each distinct query term found in a fact adds its inverse document frequency
// across the candidates: a term most facts contain says little, a rare one says a lot. A term that
// only shares a prefix of at least four letters with a fact's word ("auth" and "authenticate")
// earns half. The sum is divided by what a fact containing every query term would earn, so scores
// are comparable across queries. Ties go to the higher original confidence, then to the more recent
// fact (lower index). A query without terms matches nothing.
func Rank(query string, facts []*ahpv1.Fact) []Match {
	q := terms(nil, query)
	if len(q) == 0 || len(facts) == 0 {
		return nil
	}
	// credit[i*len(q)+j] is how well fact i matches query term j.
	credit := make([]float64, len(facts)*len(q))
	df := make([]float64, len(q))
	var buf []string
	for i, f := range facts {
		buf = terms(buf[:0], f.GetContent())
		row := credit[i*len(q) : (i+1)*len(q)]
		for j, t := range q {
			row[j] = termCredit(t, buf)
			if row[j] > 0 {
				df[j]++
			}
		}
	}
	n := float64(len(facts))
	idf := make([]float64, len(q))
	var best float64
	for j := range q {
		// The BM25 form, shifted so it stays positive even for a term every fact contains.
		idf[j] = math.Log(1 + (n-df[j]+0.5)/(df[j]+0.5))
		best += idf[j]
	}
	var out []Match
	for i, f := range facts {
		var s float64
		for j, c := range credit[i*len(q) : (i+1)*len(q)] {
			s += c * idf[j]
		}
		if s > 0 {
			out = append(out, Match{Fact: f, Index: i, Score: confidence(s / best)})
		}
	}
	// Index is unique, so the order is total and an unstable sort is deterministic.
	slices.SortFunc(out, func(a, b Match) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Fact.GetConfidence(), a.Fact.GetConfidence()); c != 0 {
			return c
		}
		return cmp.Compare(a.Index, b.Index)
	})
	return out
}

// termCredit is 1 when t is one of the fact's terms, prefixCredit when it shares a prefix of at
// least minPrefix letters with one, else 0.
func termCredit(t string, factTerms []string) float64 {
	credit := 0.0
	for _, w := range factTerms {
		if w == t {
			return 1
		}
		short, long := t, w
		if len(short) > len(long) {
			short, long = long, short
		}
		if len(short) >= minPrefix && strings.HasPrefix(long, short) {
			credit = prefixCredit
		}
	}
	return credit
}

// confidence rounds a score in (0, 1] to two decimals without reaching zero: nearly equal scores
// become ties that the tie-breaks settle, and the value stays a valid confidence.
func confidence(x float64) float64 {
	r := math.Round(x*100) / 100
	return min(max(r, 0.01), 1)
}
