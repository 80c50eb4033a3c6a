package skills

import (
	"context"
	"slices"
	"time"

	"github.com/wunder/wunder/toolconfig"
)

// Where a user's skills come from: folders under Options.Paths (read once
// by New), admin uploads (owner ""), the user's own uploads and the
// uploads other users share; which are on is the admin's and each user's
// configuration (toolconfig.Configs).

// visibleSkills are the skills one user may use, by source.
type visibleSkills struct {
	global, own, shared []*Skill
	// preload is the user's own default preload list.
	preload []string
}

// loadable are the skills load_skill alone offers: every user's and the
// user's own (another user's shared skill is offered only when named).
func (v *visibleSkills) loadable() []*Skill { return slices.Concat(v.global, v.own) }

func (v *visibleSkills) all() []*Skill { return slices.Concat(v.global, v.own, v.shared) }

// visible reads what userID may use now.
func (s *Set) visible(ctx context.Context, userID string) *visibleSkills {
	v := &visibleSkills{global: s.globalSkills(ctx)}
	if s.cache == nil || s.opts.Configs == nil || userID == "" {
		return v
	}
	if cfg, err := s.opts.Configs.Get(ctx, userID); err != nil {
		s.log.WarnContext(ctx, "skill settings unavailable", "user_id", userID, "err", err)
	} else {
		v.preload = cfg.Skills.Preload
		for _, sk := range s.uploads(ctx, userID) {
			if slices.Contains(cfg.Skills.Enabled, sk.Name) {
				v.own = append(v.own, sk)
			}
		}
	}
	shared, err := s.opts.Configs.Shared(ctx)
	if err != nil {
		s.log.WarnContext(ctx, "shared skills unavailable", "err", err)
		return v
	}
	for _, c := range shared {
		if c.UserID == userID || c.UserID == "" || len(c.Skills.Shared) == 0 {
			continue
		}
		for _, sk := range s.uploads(ctx, c.UserID) {
			if slices.Contains(c.Skills.Shared, sk.Name) && slices.Contains(c.Skills.Enabled, sk.Name) {
				v.shared = append(v.shared, sk)
			}
		}
	}
	return v
}

// globalEnabled is the admin's enabled list when one is stored, else
// Options.Enabled (nil: all).
func (s *Set) globalEnabled(ctx context.Context) []string {
	if s.opts.Configs != nil {
		c, err := s.opts.Configs.Get(ctx, "")
		if err != nil {
			s.log.WarnContext(ctx, "admin skill settings unavailable", "err", err)
		} else if c.Skills.Enabled != nil {
			return c.Skills.Enabled
		}
	}
	return s.opts.Enabled
}

// globalSkills are the enabled skills every user has: under Paths, then
// admin uploads (a folder's skill wins a name both have).
func (s *Set) globalSkills(ctx context.Context) []*Skill {
	all := s.allGlobal(ctx)
	en := s.globalEnabled(ctx)
	if en == nil {
		return all
	}
	out := all[:0:0]
	for _, sk := range all {
		if slices.Contains(en, sk.Name) {
			out = append(out, sk)
		}
	}
	return out
}

// allGlobal are the skills every user may have, enabled or not.
func (s *Set) allGlobal(ctx context.Context) []*Skill {
	out := slices.Clone(s.dirSkills)
	for _, sk := range s.uploads(ctx, "") {
		if slices.ContainsFunc(s.dirSkills, func(d *Skill) bool { return d.Name == sk.Name }) {
			continue
		}
		out = append(out, sk)
	}
	sortSkills(out)
	return out
}

// uploads returns owner's uploaded skills that load, by name, from the
// listing cache or the store.
func (s *Set) uploads(ctx context.Context, owner string) []*Skill {
	if s.cache == nil {
		return nil
	}
	s.listMu.Lock()
	l, ok := s.listings[owner]
	s.listMu.Unlock()
	if ok && time.Since(l.at) < s.opts.ListingTTL {
		return l.skills
	}
	files, err := s.opts.Store.ListToolFiles(ctx, owner, toolconfig.KindSkill, "", false)
	if err != nil {
		s.log.WarnContext(ctx, "uploaded skills unavailable", "owner", owner, "err", err)
		return l.skills // the last known, if any
	}
	var list []*Skill
	for name, pkg := range byPackage(files) {
		sk, err := s.cache.skill(ctx, owner, name, pkg)
		if err != nil {
			s.log.WarnContext(ctx, "uploaded skill skipped", "owner", owner, "name", name, "reason", err)
			continue
		}
		list = append(list, sk)
	}
	sortSkills(list)
	s.listMu.Lock()
	s.listings[owner] = listing{skills: list, at: time.Now()}
	s.listMu.Unlock()
	if len(list) > 0 {
		s.startJanitor()
	}
	return list
}

// invalidate drops owner's listing, after a change made here.
func (s *Set) invalidate(owner string) {
	s.listMu.Lock()
	delete(s.listings, owner)
	s.listMu.Unlock()
}

// byPackage groups a listing by package name.
func byPackage(files []toolconfig.File) map[string][]toolconfig.File {
	out := map[string][]toolconfig.File{}
	for _, f := range files {
		out[f.Name] = append(out[f.Name], f)
	}
	return out
}
