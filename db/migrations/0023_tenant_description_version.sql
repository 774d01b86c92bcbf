-- What GET /v1/me describes of a tenant (issue 16): its merchant configurations with their loan
-- products, its widget programs and its users' roles and e-mail verification. The api keeps that
-- description per isolate and reuses it while `description_version` is the one the request's key
-- lookup read (shared/tenants/description-cache.ts). The triggers bump it in the same statement as
-- any change, so no write path can forget to, and a change shows on the very next request.
ALTER TABLE tenants ADD COLUMN description_version INTEGER NOT NULL DEFAULT 0;
CREATE TRIGGER merchant_configs_describe_insert AFTER INSERT ON merchant_configs BEGIN UPDATE tenants SET description_version = description_version + 1 WHERE id = NEW.tenant_id; END;
CREATE TRIGGER merchant_configs_describe_update AFTER UPDATE ON merchant_configs BEGIN UPDATE tenants SET description_version = description_version + 1 WHERE id IN (OLD.tenant_id, NEW.tenant_id); END;
CREATE TRIGGER merchant_configs_describe_delete AFTER DELETE ON merchant_configs BEGIN UPDATE tenants SET description_version = description_version + 1 WHERE id = OLD.tenant_id; END;
CREATE TRIGGER loan_products_describe_insert AFTER INSERT ON loan_products BEGIN UPDATE tenants SET description_version = description_version + 1 WHERE id = NEW.tenant_id; END;
CREATE TRIGGER loan_products_describe_update AFTER UPDATE ON loan_products BEGIN UPDATE tenants SET description_version = description_version + 1 WHERE id IN (OLD.tenant_id, NEW.tenant_id); END;
CREATE TRIGGER loan_products_describe_delete AFTER DELETE ON loan_products BEGIN UPDATE tenants SET description_version = description_version + 1 WHERE id = OLD.tenant_id; END;
CREATE TRIGGER widget_programs_describe_insert AFTER INSERT ON widget_programs BEGIN UPDATE tenants SET description_version = description_version + 1 WHERE id = NEW.tenant_id; END;
CREATE TRIGGER widget_programs_describe_update AFTER UPDATE ON widget_programs BEGIN UPDATE tenants SET description_version = description_version + 1 WHERE id IN (OLD.tenant_id, NEW.tenant_id); END;
CREATE TRIGGER widget_programs_describe_delete AFTER DELETE ON widget_programs BEGIN UPDATE tenants SET description_version = description_version + 1 WHERE id = OLD.tenant_id; END;
-- Users: only what the description holds of them (a login or a password change is not one).
CREATE TRIGGER users_describe_insert AFTER INSERT ON users BEGIN UPDATE tenants SET description_version = description_version + 1 WHERE id = NEW.tenant_id; END;
CREATE TRIGGER users_describe_update AFTER UPDATE OF tenant_id, role, email_verified_at, created_at ON users BEGIN UPDATE tenants SET description_version = description_version + 1 WHERE id IN (OLD.tenant_id, NEW.tenant_id); END;
CREATE TRIGGER users_describe_delete AFTER DELETE ON users BEGIN UPDATE tenants SET description_version = description_version + 1 WHERE id = OLD.tenant_id; END;
